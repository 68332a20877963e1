"""The api's composition root: ``create_app(settings)`` wires everything; nothing connects at import."""

from __future__ import annotations

from dps_common import runtime_metrics
from dps_common.auth.authenticator import Authenticator
from dps_common.auth.cache import TtlCache
from dps_common.bootstrap import make_transactions
from dps_common.bootstrap_http import external_api
from dps_common.clock import utc_now
from dps_common.db import Transactions
from dps_common.http.app import ServiceApp
from dps_common.outbox.lag import outbox_lag
from dps_common.paging import CursorCodec

from dps_api import SERVICE
from dps_api.context import AppContext
from dps_api.resources.reference import add_reference_page
from dps_api.routes import add_routes
from dps_api.schemas.events import EVENTS
from dps_api.services.identity import DatabaseKeyStore
from dps_api.settings import Settings

API_VERSION = "1.0.0"


def build_context(settings: Settings, tx: Transactions) -> AppContext:
    authenticator = Authenticator(
        DatabaseKeyStore(tx, utc_now), settings.api_key_pepper, TtlCache(settings.key_cache_ttl_seconds), utc_now
    )
    return AppContext(settings, tx, CursorCodec(settings.cursor_secret), authenticator, utc_now)


def create_app(settings: Settings, *, tx: Transactions | None = None, key_events: bool = False) -> ServiceApp:
    """``tx`` lets tests run every use case inside their own outer transaction. ``key_events``
    (the gunicorn entry point, in each worker) subscribes this process's key cache to key events."""
    tx = tx or make_transactions(settings, "dps-api-http")
    ctx = build_context(settings, tx)
    api = external_api("api", settings, tx, ctx.authenticator, key_events=key_events)
    add_routes(api, ctx)
    runtime_metrics.install(SERVICE, "dps-api")
    runtime_metrics.add_scrape_collector("outbox", outbox_lag(SERVICE, tx))  # read at each scrape
    api.publish_openapi("Deal Pricing Service API", API_VERSION, events=EVENTS, parts=settings.openapi_part_urls,
                        server_url=settings.public_api_url)
    add_reference_page(api.app)
    api.app.context = ctx  # tests and tools reach the wiring here
    return api.app


def context_of(app: ServiceApp) -> AppContext:
    """The wiring of an app made by ``create_app``."""
    if not isinstance(app.context, AppContext):
        raise TypeError("not an app made by dps_api.app.create_app")
    return app.context
