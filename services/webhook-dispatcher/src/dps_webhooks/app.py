"""The dispatcher's composition root: ``create_app(settings)`` wires the HTTP side; nothing connects
at import. API keys are checked by the api (key introspection), behind the shared TTL cache, which
key events empty at once in each gunicorn worker (``dps_common.auth.revocations``)."""

from __future__ import annotations

from dps_common import runtime_metrics
from dps_common.bootstrap import key_authenticator, make_transactions
from dps_common.bootstrap_http import external_api
from dps_common.clock import utc_now
from dps_common.db import Transactions
from dps_common.http.app import ServiceApp
from dps_common.paging import CursorCodec

from dps_webhooks import SERVICE
from dps_webhooks.context import AppContext
from dps_webhooks.due_metrics import deliveries_due
from dps_webhooks.routes import add_routes
from dps_webhooks.schemas.events import EVENTS
from dps_webhooks.settings import Settings
from dps_webhooks.signing_secrets import SecretSealer

API_VERSION = "1.0.0"


def create_app(settings: Settings, *, tx: Transactions | None = None, key_events: bool = False) -> ServiceApp:
    """``tx`` lets tests run every use case inside their own outer transaction. ``key_events``
    (the gunicorn entry point, in each worker) subscribes this process's key cache to key events."""
    tx = tx or make_transactions(settings, "dps-webhooks-http")
    ctx = AppContext(settings, tx, CursorCodec(settings.cursor_secret), SecretSealer(settings.secret_key), utc_now)
    api = external_api("webhook-dispatcher", settings, tx, key_authenticator(settings), key_events=key_events)
    add_routes(api, ctx)
    runtime_metrics.install(SERVICE, "dps-webhook-dispatcher")
    runtime_metrics.add_scrape_collector("deliveries", deliveries_due(tx))  # read at each scrape
    api.publish_openapi("Deal Pricing Service API: webhooks", API_VERSION, events=EVENTS)
    api.app.context = ctx
    return api.app
