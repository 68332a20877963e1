"""The connector's composition root: ``create_app(settings)`` wires the HTTP side; nothing connects
at import. API keys are checked by the api (key introspection), behind the shared TTL cache, which
key events empty at once in each gunicorn worker (``dps_common.auth.revocations``); quotes are read
from the api's internal snapshot."""

from __future__ import annotations

import falcon

from dps_common import runtime_metrics
from dps_common.bootstrap import key_authenticator, make_transactions
from dps_common.bootstrap_http import external_api
from dps_common.clock import utc_now
from dps_common.db import Transactions
from dps_common.outbox.lag import outbox_lag
from dps_common.paging import CursorCodec

from dps_billing import SERVICE
from dps_billing.composition import make_oauth
from dps_billing.context import AppContext
from dps_billing.metrics import pushes_backlog
from dps_billing.openapi_doc import browser_pages
from dps_billing.routes import add_routes
from dps_billing.schemas.events import EVENTS
from dps_billing.services.ports import OAuthApp
from dps_billing.settings import Settings
from dps_billing.snapshots import SnapshotReader
from dps_billing.tokens import TokenSealer

API_VERSION = "1.0.0"
TITLE = "Deal Pricing Service API: billing"


def make_snapshots(settings: Settings) -> SnapshotReader:
    return SnapshotReader(settings.api_url, settings.internal_api_token, verify=settings.api_ca_file or True)


def create_app(
    settings: Settings, *, tx: Transactions | None = None, oauth: OAuthApp | None = None, key_events: bool = False
) -> falcon.App[falcon.Request, falcon.Response]:
    """``tx`` lets tests run every use case inside their own outer transaction. ``key_events``
    (the gunicorn entry point, in each worker) subscribes this process's key cache to key events."""
    tx = tx or make_transactions(settings, "dps-billing-http")
    ctx = AppContext(
        settings=settings,
        tx=tx,
        cursors=CursorCodec(settings.cursor_secret),
        sealer=TokenSealer(settings.billing_token_key),
        oauth=oauth or make_oauth(settings),
        snapshots=make_snapshots(settings),
        now=utc_now,
    )
    api = external_api("billing-connector", settings, tx, key_authenticator(settings), key_events=key_events)
    add_routes(api, ctx)
    runtime_metrics.install(SERVICE, "dps-billing-connector")
    runtime_metrics.add_scrape_collector("outbox", outbox_lag(SERVICE, tx))  # read at each scrape
    runtime_metrics.add_scrape_collector("pushes", pushes_backlog(tx))
    api.publish_openapi(TITLE, API_VERSION, events=EVENTS, amend=browser_pages)
    api.app.context = ctx
    return api.app
