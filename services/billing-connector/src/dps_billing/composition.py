"""The connector's composition root: every process is put together here, and only here.

- ``build_http(settings)``: the Falcon app (gunicorn's ``dps_billing.wsgi:create()``; the tests'
  ``create_app``). API keys are checked by the api (key introspection), behind the shared TTL cache,
  which key events empty at once in each gunicorn worker (``dps_common.auth.revocations``); quotes
  are read from the api's internal snapshot.
- ``build_push_worker(settings)``: the push worker of ``dealpricing-billing worker``.

Nothing connects at import. The HTTP side (Falcon, the resources, Jinja2) is imported inside
``build_http`` only: the worker's command imports this module and loads none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dps_common import runtime_metrics
from dps_common.bootstrap import key_authenticator, make_settings_engine, make_transactions
from dps_common.clock import utc_now
from dps_common.db import Transactions
from dps_common.outbox.lag import outbox_lag
from dps_common.paging import CursorCodec

from dps_billing import SERVICE
from dps_billing.adapters.billing_platform.client import new_http_client
from dps_billing.adapters.billing_platform.oauth import AppOAuth
from dps_billing.adapters.billing_platform.postgres_pacer import PostgresPacer
from dps_billing.adapters.metrics import pushes_backlog
from dps_billing.adapters.outbox import OUTBOX
from dps_billing.adapters.quote_snapshots import SnapshotReader
from dps_billing.adapters.tokens import TokenSealer
from dps_billing.schemas.events import EVENTS
from dps_billing.services.access import AccessTokens
from dps_billing.services.connect_flow import ConnectFlow
from dps_billing.services.connection import ConnectionService
from dps_billing.services.platform_events import PlatformEvents
from dps_billing.services.ports import OAuthApp
from dps_billing.services.push_queue import PushQueue
from dps_billing.services.push_run import PushRunner
from dps_billing.services.pushes import PushService
from dps_billing.settings import Settings
from dps_billing.workers.pushes import PushWorker

if TYPE_CHECKING:
    import falcon

API_VERSION = "1.0.0"
TITLE = "Deal Pricing Service API: billing"


def make_oauth(settings: Settings) -> AppOAuth:
    return AppOAuth(
        api_url=settings.billing_api_url, secret_key=settings.billing_secret_key, client_id=settings.billing_client_id
    )


def make_snapshots(settings: Settings) -> SnapshotReader:
    return SnapshotReader(settings.api_url, settings.internal_api_token, verify=settings.api_ca_file or True)


def build_http(
    settings: Settings, *, tx: Transactions | None = None, oauth: OAuthApp | None = None, key_events: bool = False
) -> falcon.App[falcon.Request, falcon.Response]:
    """``tx`` lets tests run every use case inside their own outer transaction. ``key_events``
    (the gunicorn entry point, in each worker) subscribes this process's key cache to key events."""
    from dps_common.bootstrap_http import external_api

    from dps_billing.resources.context import AppContext
    from dps_billing.resources.openapi_doc import browser_pages
    from dps_billing.resources.routes import add_routes

    tx = tx or make_transactions(settings, "dps-billing-http")
    sealer = TokenSealer(settings.billing_token_key)
    ctx = AppContext(
        settings=settings,
        tx=tx,
        cursors=CursorCodec(settings.cursor_secret),
        connections=ConnectionService(tx, sealer, oauth or make_oauth(settings), settings, utc_now, OUTBOX),
        connect_flow=ConnectFlow(tx, settings, utc_now),
        platform_events=PlatformEvents(tx, settings.billing_webhook_secret, utc_now, OUTBOX),
        pushes=PushService(tx, make_snapshots(settings), utc_now),
    )
    api = external_api(SERVICE, settings, tx, key_authenticator(settings), key_events=key_events)
    add_routes(api, ctx)
    runtime_metrics.install(SERVICE, "dps-billing-connector")
    runtime_metrics.add_scrape_collector("outbox", outbox_lag(SERVICE, tx))  # read at each scrape
    runtime_metrics.add_scrape_collector("pushes", pushes_backlog(tx))
    api.publish_openapi(TITLE, API_VERSION, events=EVENTS, amend=browser_pages)
    api.app.context = ctx
    return api.app


def build_push_worker(settings: Settings) -> PushWorker:
    engine = make_settings_engine(settings, "dps-billing-worker")
    tx = Transactions.for_engine(engine)
    tokens = AccessTokens(tx, TokenSealer(settings.billing_token_key), make_oauth(settings), utc_now, OUTBOX)
    pacer = PostgresPacer(engine, settings.billing_rate_per_second)
    runner = PushRunner(settings, tx, tokens, pacer, new_http_client(), utc_now, OUTBOX)
    return PushWorker(settings, PushQueue(settings, tx), runner)
