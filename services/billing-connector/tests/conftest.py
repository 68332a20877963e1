"""What the connector's suite tells the test plugin (``dps_testing.plugin`` provides the
migrated database, a rolled-back transaction per test, ``app`` and ``client``), and the real HTTP
servers around it:

- ``fake_api``: the api's internal contract (key introspection, quote snapshots) from registered data;
- ``stand_in``: the billing platform stand-in (``dps_billing_stand_in``), a real Stripe-like server;
- ``served``: the connector itself on a real socket (its own engine, committed data), the redirect
  target of the stand-in's install page and the receiver of its signed webhooks.

Module-scoped fixtures follow the plugin's ``database_url``. Tests that commit (the served app, workers in threads or processes) use a fresh organization each,
so they never see each other's rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from dps_common.crypto import new_key
from dps_common.db import Transactions
from dps_testing.fake_api import FakeApi
from dps_testing.rate_limits import UNTHROTTLED
from dps_testing.service import ServiceUnderTest
from dps_testing.transactions import committed

from dps_billing.composition import build_http
from dps_billing.db import models  # noqa: F401  (every table on the metadata)
from dps_billing.db.base import Base
from dps_billing.settings import Settings
from dps_billing_stand_in.server import BillingStandIn

from billing_helpers import CONSOLE_URL, WEBHOOK_SECRET

INTERNAL_TOKEN = "billing-test-internal-token-0123456789abcdef"
SECRET_KEY = "sk_test_billing_connector_tests"
CLIENT_ID = "ca_billing_connector_tests"
CALLBACK_PATH = "/external/v1/billing-connection/callback"
WEBHOOKS_PATH = "/external/v1/billing-platform/webhooks"


class _Quiet(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class _Late:
    """A WSGI app set after its server is bound (the stand-in needs the server's URL first)."""

    app: Any = None

    def __call__(self, environ: Any, start_response: Any) -> Any:
        return self.app(environ, start_response)


@pytest.fixture(scope="session")
def dps_service() -> ServiceUnderTest[Settings]:
    return ServiceUnderTest(package="dps_billing", metadata=Base.metadata, create_app=build_http)


@pytest.fixture(scope="session")
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi(INTERNAL_TOKEN)
    yield api
    api.stop()


@pytest.fixture(scope="session")
def served_socket() -> Iterator[tuple[BaseWSGIServer, _Late]]:
    late = _Late()
    server = make_server("127.0.0.1", 0, late, threaded=True, request_handler=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, late
    server.shutdown()
    thread.join(timeout=5)
    server.server_close()


@pytest.fixture(scope="session")
def served_url(served_socket: tuple[BaseWSGIServer, _Late]) -> str:
    return f"http://127.0.0.1:{served_socket[0].server_port}"


@pytest.fixture(scope="session")
def stand_in(served_url: str) -> Iterator[BillingStandIn]:
    platform = BillingStandIn.start(
        secret_key=SECRET_KEY,
        client_id=CLIENT_ID,
        redirect_uris=[served_url + CALLBACK_PATH],
        webhook_url=served_url + WEBHOOKS_PATH,
        webhook_secret=WEBHOOK_SECRET,
    )
    yield platform
    platform.stop()


@pytest.fixture(scope="module")
def settings_env(database_url: str, fake_api: FakeApi, stand_in: BillingStandIn, served_url: str) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "API_URL": fake_api.url,
        "INTERNAL_API_TOKEN": INTERNAL_TOKEN,
        "CURSOR_SECRET": "billing-test-cursor-0123456789abcdef0123456789",
        "BILLING_SECRET_KEY": SECRET_KEY,
        "BILLING_CLIENT_ID": CLIENT_ID,
        "BILLING_API_URL": stand_in.api_url,
        "BILLING_MARKETPLACE_URL": stand_in.marketplace_url,
        "BILLING_DASHBOARD_URL": stand_in.dashboard_url,
        "BILLING_REDIRECT_URI": served_url + CALLBACK_PATH,
        "BILLING_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "BILLING_TOKEN_KEY": new_key(),
        "BILLING_STATE_SECRET": "billing-test-state-secret-0123456789abcdef",
        "BILLING_RETURN_URL": "https://app.example/settings/integrations",
        "CONSOLE_URL": CONSOLE_URL,
        "KEY_CACHE_TTL_SECONDS": "0",
        "PUSH_LEASE_SECONDS": "6",
        "PUSH_POLL_INTERVAL_SECONDS": "0.1",
        "LOG_LEVEL": "WARNING",
        **UNTHROTTLED,
    }


@pytest.fixture(scope="module")
def settings(settings_env: dict[str, str]) -> Settings:
    return Settings.from_env(settings_env)


@pytest.fixture(scope="module")
def make_settings(settings_env: dict[str, str]) -> Callable[..., Settings]:
    def make(**overrides: str) -> Settings:
        return Settings.from_env({**settings_env, **overrides})

    return make


@pytest.fixture(scope="module")
def committed_tx(database_url: str) -> Iterator[Transactions]:
    with committed(database_url, "dps-billing-tests") as transactions:
        yield transactions


@pytest.fixture(scope="module")
def served(served_socket: tuple[BaseWSGIServer, _Late], settings: Settings,
           committed_tx: Transactions) -> Iterator[str]:
    """The connector on a real socket, on committed data (the module's database)."""
    server, late = served_socket
    late.app = build_http(settings, tx=committed_tx)
    yield f"http://127.0.0.1:{server.server_port}"
    late.app = None
