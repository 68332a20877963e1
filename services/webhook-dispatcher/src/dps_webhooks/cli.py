"""``dealpricing-webhooks``: the dispatcher's processes and chores.

- ``migrate``: apply the dispatcher's migrations to DATABASE_URL.
- ``worker``: consume the api's events and deliver them (scale this by running more of it).

The worker process is put together here (its composition root): the delivery worker, the event
consumer handing deliveries over to it (``delivery/hand_over.py``), the retention job, and, with
``WEBHOOK_WORKER_METRICS_PORT`` set, ``/metrics`` (``dps_webhooks.metrics``) and ``/healthz``: alive
while the delivery loop turns and the consumer and retention threads run.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from collections.abc import Callable

from dps_common import logs
from dps_common.bootstrap import make_settings_engine
from dps_common.bootstrap_cli import run_command
from dps_common.db import Transactions
from dps_common.process_server import serve_health_and_metrics

from dps_webhooks import SERVICE, metrics
from dps_webhooks.consumer import EventConsumer, shard_consumers
from dps_webhooks.delivery.retention import run_retention
from dps_webhooks.delivery.worker import DeliveryWorker
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.worker")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dealpricing-webhooks", description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply the dispatcher's database migrations")
    worker = commands.add_parser("worker", help="consume events and deliver webhooks until stopped")
    worker.add_argument(
        "--no-consume", action="store_true", help="deliver only; leave the event queue to other workers"
    )
    args = parser.parse_args(argv)

    def work(settings: Settings) -> int:
        run_worker(settings, consume=not args.no_consume)
        return 0

    return run_command(args.command, "dps_webhooks", Settings.from_env, work, service=SERVICE, process="delivery-worker")


def run_worker(settings: Settings, *, consume: bool = True) -> None:
    """The ``dealpricing-webhooks worker`` process: deliveries, events (``consume``) and retention."""
    engine = make_settings_engine(settings, "dps-webhooks-worker")
    tx = Transactions.for_engine(engine)
    listen_url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    worker = DeliveryWorker(settings, tx, listen_url)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: worker.stop_from_signal())
    failed = threading.Event()

    def retention() -> None:
        run_retention(tx, settings.retention_days, settings.retention_interval_seconds, worker.stopping)

    helpers = [_thread("webhook-retention", retention, worker, failed)]
    if consume:  # one consumer per shard of the events stream (one without shards)
        for index, consumer in enumerate(shard_consumers(settings, tx, hand_over=worker)):

            def consume_events(consumer: EventConsumer = consumer) -> None:
                with logs.kind("event-consumer"):  # its lines apart from the deliveries'
                    consumer.run(worker.stopping)

            name = "webhook-consumer" if settings.events_shards <= 1 else f"webhook-consumer-{index}"
            helpers.append(_thread(name, consume_events, worker, failed))
    metrics.ATTEMPTS_IN_FLIGHT.set_function(lambda: worker.in_flight)  # read at each scrape, never written
    for helper in helpers:
        helper.start()
    log.info("worker started", extra={"concurrency": settings.delivery_concurrency, "consume": consume})
    try:
        with serve_health_and_metrics(settings.metrics_host, settings.metrics_port, liveness(worker, helpers)):
            worker.run()
    finally:
        worker.stop()
        for helper in helpers:
            helper.join()
        tx.dispose()
    log.info("worker stopped")
    if failed.is_set():
        raise SystemExit(1)  # a part of the worker died: let the supervisor restart the whole


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


def _thread(name: str, target: Callable[[], None], worker: DeliveryWorker, failed: threading.Event) -> threading.Thread:
    """A part of the worker process; when it fails, the whole process stops (and exits non-zero)."""

    def run() -> None:
        try:
            target()
        except Exception:
            log.exception("worker part failed", extra={"part": name})
            failed.set()
            worker.stop()

    return threading.Thread(target=run, name=name)
