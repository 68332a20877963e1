"""What the console's suite tells the test plugin (``dps_testing.plugin`` provides the
migrated console database, a rolled-back transaction per test, ``app`` and ``client``), and the real
servers around it: the api (gunicorn over HTTPS on its own database, organizations provisioned with
its admin command line), the webhook dispatcher and the billing connector (their own apps on real
sockets, their own databases, the billing platform stand-in), and a real SMTP server (aiosmtpd)
that receives the sign-in mails. The console imports none of their code: they are servers here,
as in production."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from dps_common.crypto import new_key
from dps_testing.processes import write_tls_files
from dps_testing.provisioning import Admin, Org
from dps_testing.rate_limits import UNTHROTTLED
from dps_testing.real_api import api_database, api_server
from dps_testing.service import ServiceUnderTest
from dps_testing.services import fresh_database

from dps_console.composition import build_http
from dps_console.db.models import Base
from dps_console.settings import Settings

from console_helpers import Mailbox, late_served, served, start_mailbox

PEPPER = "console-test-pepper-0123456789abcdef0123456789"
CURSOR_SECRET = "console-test-cursor-0123456789abcdef0123456789"
INTERNAL_TOKEN = "console-test-internal-token-0123456789abcdef"
CONSOLE_TOKEN = "console-test-console-token-0123456789abcdef"
PUBLIC_URL = "http://console.test/console"


@pytest.fixture(scope="session")
def dps_service() -> ServiceUnderTest[Settings]:
    return ServiceUnderTest(package="dps_console", metadata=Base.metadata, create_app=build_http)


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return write_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def api_env() -> Iterator[dict[str, str]]:
    with api_database(
        "dps_console_api", API_KEY_PEPPER=PEPPER, CURSOR_SECRET=CURSOR_SECRET, INTERNAL_API_TOKEN=INTERNAL_TOKEN,
        CONSOLE_API_TOKEN=CONSOLE_TOKEN, **UNTHROTTLED,
    ) as env:
        yield env


@pytest.fixture(scope="session")
def api_origin(api_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("api") / "api.log"
    with api_server(api_env, tls_files, log) as origin:
        yield origin


@pytest.fixture(scope="session")
def admin_cli(api_env: dict[str, str]) -> Admin:
    return Admin(api_env)


@pytest.fixture(scope="session")
def org(admin_cli: Admin) -> Org:
    """An organization with an admin, a user and a view-only member (each with an integration key)."""
    return admin_cli.organization("Console Co")


@pytest.fixture(scope="session")
def other_org(admin_cli: Admin) -> Org:
    return admin_cli.organization("Other Co")


@pytest.fixture(scope="session")
def mailbox() -> Iterator[Mailbox]:
    with start_mailbox() as box:
        yield box


@pytest.fixture(scope="module")
def settings_env(database_url: str, api_origin: str, tls_files: dict[str, str], mailbox: Mailbox) -> dict[str, str]:
    """The console's environment; the dispatcher and the connector are added by the suites that use
    them (``services_env``): signing in needs only the api."""
    return {
        "DATABASE_URL": database_url,
        "API_URL": api_origin + "/external/v1",
        "API_INTERNAL_URL": api_origin,
        "WEBHOOKS_URL": "http://127.0.0.1:9/external/v1",
        "BILLING_URL": "http://127.0.0.1:9/external/v1",
        "API_CA_FILE": tls_files["ca"],
        "CONSOLE_API_TOKEN": CONSOLE_TOKEN,
        "SMTP_URL": mailbox.url,
        "MAIL_FROM": "console@dealpricing.test",
        "CONSOLE_PUBLIC_URL": PUBLIC_URL,
        "CONSOLE_SECRET_KEY": new_key(),
        "DPS_ENVIRONMENT": "development",
        "LOG_LEVEL": "WARNING",
    }


@pytest.fixture(scope="module")
def settings(settings_env: dict[str, str]) -> Settings:
    return Settings.from_env(settings_env)


@pytest.fixture(scope="module")
def make_settings(settings_env: dict[str, str]) -> Callable[..., Settings]:
    def make(**overrides: str) -> Settings:
        return Settings.from_env({**settings_env, **overrides})

    return make


@pytest.fixture(scope="session")
def webhooks_database() -> Iterator[str]:
    """The dispatcher's database (migrated): a test may give a delivery a status only its worker sets."""
    from dps_common import migrations

    with fresh_database("dps_console_webhooks") as url:
        migrations.upgrade("dps_webhooks", url)
        yield url


@pytest.fixture(scope="session")
def webhooks_origin(api_origin: str, tls_files: dict[str, str], webhooks_database: str) -> Iterator[str]:
    """The real webhook dispatcher (its own app and database) on a socket, checking keys at the api."""
    from dps_webhooks.composition import build_http as create_dispatcher
    from dps_webhooks.settings import Settings as DispatcherSettings

    settings = DispatcherSettings.from_env({
        "DATABASE_URL": webhooks_database, "CURSOR_SECRET": CURSOR_SECRET, "WEBHOOK_SECRET_KEY": new_key(),
        "API_URL": api_origin, "API_CA_FILE": tls_files["ca"], "INTERNAL_API_TOKEN": INTERNAL_TOKEN,
        "KEY_CACHE_TTL_SECONDS": "0", "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8", **UNTHROTTLED,
    })
    app = create_dispatcher(settings)
    with served(app) as origin:
        yield origin
    app.context.tx.dispose()


@pytest.fixture(scope="session")
def billing_origin(api_origin: str, tls_files: dict[str, str]) -> Iterator[str]:
    """The real billing connector (its own app and database, the platform stand-in) on a socket."""
    from dps_common import migrations

    from dps_billing.composition import build_http as create_connector
    from dps_billing.settings import Settings as ConnectorSettings
    from dps_billing_stand_in.server import BillingStandIn

    secret_key, client_id, webhook_secret = "sk_test_console_tests", "ca_console_tests", "whsec_console_tests_0123456789"
    with fresh_database("dps_console_billing") as url, late_served() as (origin, late):
        migrations.upgrade("dps_billing", url)
        callback = origin + "/external/v1/billing-connection/callback"
        platform = BillingStandIn.start(secret_key=secret_key, client_id=client_id, redirect_uris=[callback],
                                        webhook_url=origin + "/external/v1/billing-platform/webhooks",
                                        webhook_secret=webhook_secret)
        try:
            settings = ConnectorSettings.from_env({
                "DATABASE_URL": url, "API_URL": api_origin, "API_CA_FILE": tls_files["ca"],
                "INTERNAL_API_TOKEN": INTERNAL_TOKEN, "CURSOR_SECRET": CURSOR_SECRET,
                "BILLING_SECRET_KEY": secret_key, "BILLING_CLIENT_ID": client_id,
                "BILLING_API_URL": platform.api_url, "BILLING_MARKETPLACE_URL": platform.marketplace_url,
                "BILLING_DASHBOARD_URL": platform.dashboard_url, "BILLING_REDIRECT_URI": callback,
                "BILLING_WEBHOOK_SECRET": webhook_secret, "BILLING_TOKEN_KEY": new_key(),
                "BILLING_STATE_SECRET": "console-test-state-secret-0123456789abcdef",
                "CONSOLE_URL": PUBLIC_URL, "KEY_CACHE_TTL_SECONDS": "0", "LOG_LEVEL": "WARNING", **UNTHROTTLED,
            })
            late.app = create_connector(settings)
            yield origin
            late.app.context.tx.dispose()
        finally:
            platform.stop()


@pytest.fixture(scope="module")
def services_env(settings_env: dict[str, str], webhooks_origin: str, billing_origin: str) -> dict[str, str]:
    return {**settings_env, "WEBHOOKS_URL": webhooks_origin + "/external/v1",
            "BILLING_URL": billing_origin + "/external/v1"}
