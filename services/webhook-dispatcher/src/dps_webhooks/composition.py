"""The dispatcher's composition root: one ``build_<process>(settings)`` per process, called by
``wsgi.py`` and the command line only; nothing connects at import.

- ``build_http``: the Falcon app of ``/webhook-configs/**``. API keys are checked by the api (key
  introspection), behind the shared TTL cache, which key events empty at once in each gunicorn
  worker (``dps_common.auth.revocations``).
- ``build_worker``: the ``dealpricing-webhooks worker`` process: the delivery loop
  (``workers/deliveries.py``) on the main thread, the event consumers (``workers/consumers.py``, one
  per shard) handing it deliveries through the one ``HandOver`` interface, the retention loop
  (``workers/retention.py``), and with ``WEBHOOK_WORKER_METRICS_PORT`` set ``/metrics``
  (``adapters/metrics.py``) and ``/healthz``: alive while the delivery loop turns and the consumer
  and retention threads run.

The HTTP side's parts are imported by ``build_http`` when it is called, so the worker process
(which imports this module too) never loads the HTTP framework.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from dps_common import logs, runtime_metrics
from dps_common.bootstrap import key_authenticator, make_settings_engine, make_transactions
from dps_common.clock import utc_now
from dps_common.db import Transactions
from dps_common.paging import CursorCodec
from dps_common.process_server import worker_process

from dps_webhooks import SERVICE
from dps_webhooks.adapters import metrics
from dps_webhooks.adapters.due_metrics import deliveries_due
from dps_webhooks.adapters.events import webhook_test_envelope
from dps_webhooks.adapters.signing_secrets import SecretSealer
from dps_webhooks.schemas.events import EVENTS
from dps_webhooks.services.deliveries import DeliveryService
from dps_webhooks.services.endpoints import EndpointService
from dps_webhooks.services.throttling import Throttle
from dps_webhooks.settings import Settings
from dps_webhooks.workers.consumers import EventConsumer, shard_consumers
from dps_webhooks.workers.deliveries import DeliveryWorker
from dps_webhooks.workers.retention import run_retention

if TYPE_CHECKING:
    from dps_common.http.app import ServiceApp

API_VERSION = "1.0.0"
log = logging.getLogger("dps.webhooks.worker")


def build_http(settings: Settings, *, tx: Transactions | None = None, key_events: bool = False) -> ServiceApp:
    """``tx`` lets tests run every use case inside their own outer transaction. ``key_events``
    (the gunicorn entry point, in each worker) subscribes this process's key cache to key events."""
    # the HTTP side's parts, imported here alone: the worker process never loads the HTTP framework
    from dps_common.bootstrap_http import external_api

    from dps_webhooks.resources.context import AppContext
    from dps_webhooks.resources.routes import add_routes

    tx = tx or make_transactions(settings, "dps-webhooks-http")
    endpoints = EndpointService(tx, SecretSealer(settings.secret_key), settings, utc_now)
    deliveries = DeliveryService(tx, utc_now, webhook_test_envelope)
    ctx = AppContext(settings, tx, CursorCodec(settings.cursor_secret), endpoints, deliveries)
    api = external_api("webhook-dispatcher", settings, tx, key_authenticator(settings), key_events=key_events)
    add_routes(api, ctx)
    runtime_metrics.install(SERVICE, "dps-webhook-dispatcher")
    runtime_metrics.add_scrape_collector("deliveries", deliveries_due(tx))  # read at each scrape
    api.publish_openapi("Deal Pricing Service API: webhooks", API_VERSION, events=EVENTS)
    api.app.context = ctx
    return api.app


def build_worker(settings: Settings, *, consume: bool = True) -> WorkerProcess:
    """The worker process, put together and not started: deliveries, events (``consume``), retention."""
    engine = make_settings_engine(settings, "dps-webhooks-worker")
    tx = Transactions.for_engine(engine)
    listen_url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    worker = DeliveryWorker(settings, tx, listen_url, Throttle.for_settings(settings, tx))  # turns in REDIS_URL's store
    parts: list[tuple[str, Callable[[], None]]] = [
        ("webhook-retention", lambda: run_retention(
            tx, settings.retention_days, settings.retention_interval_seconds, worker.stopping)),
    ]
    if consume:  # one consumer per shard of the events stream (one without shards)
        for index, consumer in enumerate(shard_consumers(settings, tx, hand_over=worker)):

            def consume_events(consumer: EventConsumer = consumer) -> None:
                with logs.kind("event-consumer"):  # its lines apart from the deliveries'
                    consumer.run(worker.stopping)

            name = "webhook-consumer" if settings.events_shards <= 1 else f"webhook-consumer-{index}"
            parts.append((name, consume_events))
    metrics.ATTEMPTS_IN_FLIGHT.set_function(lambda: worker.in_flight)  # read at each scrape, never written
    return WorkerProcess(settings, tx, worker, parts, consume=consume)


class WorkerProcess:
    """The delivery loop on the main thread and the other parts on threads of their own; when a part
    fails, the whole process stops (and exits non-zero) for its supervisor to start it again."""

    def __init__(
        self,
        settings: Settings,
        tx: Transactions,
        worker: DeliveryWorker,
        parts: list[tuple[str, Callable[[], None]]],
        *,
        consume: bool,
    ):
        self._settings = settings
        self._tx = tx
        self._worker = worker
        self._failed = threading.Event()
        self._consume = consume
        self.helpers = [self._thread(name, target) for name, target in parts]

    def run(self) -> None:
        worker, settings = self._worker, self._settings
        with worker_process("worker", log, worker.stop_from_signal, settings.metrics_host, settings.metrics_port,
                            liveness(worker, self.helpers), concurrency=settings.delivery_concurrency,
                            consume=self._consume):
            for helper in self.helpers:
                helper.start()
            try:
                worker.run()
            finally:
                worker.stop()
                for helper in self.helpers:
                    helper.join()
                self._tx.dispose()
        if self._failed.is_set():
            raise SystemExit(1)  # a part of the worker died: let the supervisor restart the whole

    def _thread(self, name: str, target: Callable[[], None]) -> threading.Thread:
        def run() -> None:
            try:
                target()
            except Exception:
                log.exception("worker part failed", extra={"part": name})
                self._failed.set()
                self._worker.stop()

        return threading.Thread(target=run, name=name)


def liveness(worker: DeliveryWorker, helpers: list[threading.Thread]) -> Callable[[], str | None]:
    """Alive while the delivery loop turns and the consumer and retention threads run. Once stopping,
    the helpers end by design and the loop drains what is in flight (still turning)."""

    def not_alive() -> str | None:
        if not worker.stopping.is_set():
            for helper in helpers:
                if not helper.is_alive():
                    return f"the {helper.name} thread is not running"
        return worker.heartbeat.stalled()

    return not_alive
