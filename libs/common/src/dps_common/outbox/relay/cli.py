"""``dps-outbox-relay`` (the api's ``dealpricing-outbox-relay``): run the outbox relay until SIGTERM or SIGINT (with ``RELAY_METRICS_PORT``
set, serving its ``/healthz`` and ``/metrics`` meanwhile)."""

from __future__ import annotations

import signal
import sys
import threading

from dps_common import logs, runtime_metrics
from dps_common.db import Transactions, make_engine
from dps_common.messaging import redacted
from dps_common.outbox.relay.relay import OutboxRelay, log
from dps_common.outbox.relay.settings import RelaySettings
from dps_common.process_server import serve_health_and_metrics
from dps_common.settings import SettingsError


def main() -> int:
    try:
        settings = RelaySettings.from_env()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    logs.configure(settings.log_level, service=settings.service, process="outbox-relay")
    runtime_metrics.install(settings.service)  # dps_build_info on its /metrics
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        # setting an Event in a handler is safe here: the main thread waits with timeouts, never on it
        signal.signal(signum, lambda *_: stop.set())
    # one transaction at a time: one connection kept (and one more at most, should a metrics scrape
    # read meanwhile), beside the LISTEN connection
    engine = make_engine(settings.database_url, pool_size=1, max_overflow=1, application_name=settings.application_name)
    log.info("relay started", extra={"broker": redacted(settings.amqp_url), "exchange": settings.events_exchange})
    relay = OutboxRelay(settings, Transactions.for_engine(engine))
    try:
        # /healthz: alive while the relay loop turns (it wakes at least every poll interval)
        with serve_health_and_metrics(settings.metrics_host, settings.metrics_port, relay.heartbeat.stalled):
            relay.run(stop)
    finally:
        engine.dispose()
    log.info("relay stopped")
    return 0
