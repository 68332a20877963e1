"""The api's composition root: one ``build_<process>(settings)`` per process, which ``wsgi.py`` and the
command line call; nothing connects at import.

- ``build_http``: the Falcon app gunicorn serves (``wsgi.py``);
- ``build_admin`` and ``migrate_database``: the operator's command line (``dealpricing-admin``);
- ``build_seed``: the demo seed (``dps_api.cli.seed``, which ``make run`` and the benches call).

The api's only worker is its outbox relay, the shared one (``dealpricing-outbox-relay`` runs
``dps_common.outbox.relay``, built there): nothing to build here.

What only the HTTP process needs (Falcon, the resources, the broker's key events, the metrics) is
imported inside ``build_http``, so that the command line, which imports this module, loads none of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dps_common.auth.authenticator import Authenticator
from dps_common.auth.cache import TtlCache
from dps_common.clock import utc_now
from dps_common.db import Transactions, make_engine
from dps_common.paging import CursorCodec

from dps_api import SERVICE
from dps_api.services.identity import DatabaseKeyStore, IdentityService
from dps_api.services.identity import parse_role as parse_role  # the command line checks roles before it connects

if TYPE_CHECKING:
    from dps_common.http.app import ServiceApp

    from dps_api.cli.settings import AdminSettings
    from dps_api.resources.context import AppContext
    from dps_api.settings import Settings

API_VERSION = "1.0.0"


def build_http(settings: Settings, *, tx: Transactions | None = None, key_events: bool = False) -> ServiceApp:
    """The api's Falcon app. ``tx`` lets tests run every use case inside their own outer transaction.
    ``key_events`` (the gunicorn entry point, in each worker) subscribes this process's key cache to
    key events."""
    from dps_common import runtime_metrics
    from dps_common.bootstrap import make_transactions
    from dps_common.bootstrap_http import external_api
    from dps_common.outbox.lag import outbox_lag

    from dps_api.resources.reference import add_reference_page
    from dps_api.resources.routes import add_routes
    from dps_api.schemas.events import EVENTS

    tx = tx or make_transactions(settings, "dps-api-http")
    ctx = _context(settings, tx)
    api = external_api("api", settings, tx, ctx.authenticator, key_events=key_events)
    add_routes(api, ctx)
    runtime_metrics.install(SERVICE, "dps-api")
    runtime_metrics.add_scrape_collector("outbox", outbox_lag(SERVICE, tx))  # read at each scrape
    api.publish_openapi("Deal Pricing Service API", API_VERSION, events=EVENTS, parts=settings.openapi_part_urls,
                        server_url=settings.public_api_url)
    add_reference_page(api.app)
    api.app.context = ctx  # tests and tools reach the wiring here
    return api.app


def _context(settings: Settings, tx: Transactions) -> AppContext:
    from dps_api.adapters.outbox import OUTBOX
    from dps_api.resources.context import AppContext

    authenticator = Authenticator(
        DatabaseKeyStore(tx, utc_now), settings.api_key_pepper, TtlCache(settings.key_cache_ttl_seconds), utc_now
    )
    return AppContext(settings, tx, CursorCodec(settings.cursor_secret), authenticator, utc_now, OUTBOX)


def context_of(app: ServiceApp) -> AppContext:
    """The wiring of an app made by ``build_http``."""
    from dps_api.resources.context import AppContext

    if not isinstance(app.context, AppContext):
        raise TypeError("not an app made by dps_api.composition.build_http")
    return app.context


@dataclass(frozen=True)
class Admin:
    """What the admin command line's commands use; ``close`` ends its database connection."""

    identity: IdentityService
    close: Callable[[], None]


def build_admin(settings: AdminSettings) -> Admin:
    tx = Transactions.for_engine(make_engine(settings.database_url, pool_size=1, application_name="dps-admin"))
    # another process's key cache is out of reach; its entries expire on their own
    return Admin(IdentityService(tx, settings.api_key_pepper, utc_now, _no_cache), tx.dispose)


def migrate_database(database_url: str) -> None:
    """``dealpricing-admin migrate``: the Alembic tree to head."""
    from dps_api.db import migrate  # Alembic (and Mako) only for this command: a third of the others' start

    migrate.upgrade(database_url)


def _no_cache(key_id: str) -> None:
    return None


@dataclass(frozen=True)
class Seeding:
    """What the demo seed uses: the api's app (served on a loopback port while the seed runs), the
    identity use cases (users have no HTTP API), and the key store (to check a kept key still works)."""

    app: ServiceApp
    identity: IdentityService
    keys: DatabaseKeyStore
    close: Callable[[], None]


def build_seed(settings: Settings, *, tx: Transactions | None = None) -> Seeding:
    """``tx``: a test's transactions, which the caller keeps (``close`` then ends nothing)."""
    own = tx is None
    tx = tx or Transactions.for_engine(make_engine(settings.database_url, pool_size=2, application_name="dps-seed"))
    app = build_http(settings, tx=tx)
    ctx = context_of(app)
    identity = IdentityService(tx, settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
    return Seeding(app, identity, DatabaseKeyStore(tx, ctx.now), tx.dispose if own else _nothing)


def _nothing() -> None:
    return None
