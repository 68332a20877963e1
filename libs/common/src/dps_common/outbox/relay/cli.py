"""``dps-outbox-relay`` (the api's ``dealpricing-outbox-relay``): run the outbox relay until SIGTERM or SIGINT (with ``RELAY_METRICS_PORT``
set, serving its ``/healthz`` and ``/metrics`` meanwhile)."""

from __future__ import annotations

import sys
import threading

from dps_common import logs, runtime_metrics
from dps_common.db import Transactions, make_engine
from dps_common.messaging import redacted
from dps_common.outbox.relay.relay import OutboxRelay, log
from dps_common.outbox.relay.settings import RelaySettings
from dps_common.process_server import worker_process
from dps_common.settings import SettingsError


def main() -> int:
    try:
        settings = RelaySettings.from_env()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    logs.configure(settings.log_level, service=settings.service, process="outbox-relay")
    runtime_metrics.install(settings.service)  # dps_build_info on its /metrics
    stop = threading.Event()  # set by SIGTERM or SIGINT
    # one transaction at a time: one connection kept (and one more at most, should a metrics scrape
    # read meanwhile), beside the LISTEN connection
    engine = make_engine(settings.database_url, pool_size=1, max_overflow=1, application_name=settings.application_name)
    relay = OutboxRelay(settings, Transactions.for_engine(engine))
    # /healthz: alive while the relay loop turns (it wakes at least every poll interval)
    with worker_process("relay", log, stop.set, settings.metrics_host, settings.metrics_port, relay.heartbeat.stalled,
                        broker=redacted(settings.amqp_url), exchange=settings.events_exchange):
        try:
            relay.run(stop)
        finally:
            engine.dispose()
    return 0
