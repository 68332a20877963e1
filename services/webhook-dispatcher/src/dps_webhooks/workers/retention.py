"""The retention loop of the worker process: a round of the history's maintenance
(``services/retention.maintain``: partitions ahead, expired days dropped, the events past retention
that no delivery uses deleted) now and then. When the database is away, the loop logs it once
(``dps_common.db_retry.OutageLog``) and tries again after a backoff (0.5 s doubling to 15 s, never
longer than its interval) instead of a whole interval later."""

from __future__ import annotations

import logging
import threading

from dps_common.db import Transactions
from dps_common.db_retry import OutageLog, is_connection_lost

from dps_webhooks.services.retention import maintain

log = logging.getLogger("dps.webhooks.retention")


def run_retention(tx: Transactions, retention_days: float, interval_seconds: float, stop: threading.Event) -> None:
    """A round now and then every ``interval_seconds`` until ``stop`` is set."""
    database = OutageLog(log, "retention loop")
    while not stop.is_set():
        try:
            done = maintain(tx, retention_days)
            database.succeeded()
            if done.created or done.dropped or done.deliveries or done.events:
                log.info(
                    "history maintained",
                    extra={
                        "partitionsCreated": [day.isoformat() for day in done.created],
                        "partitionsDropped": [day.isoformat() for day in done.dropped],
                        "deliveries": done.deliveries,
                        "events": done.events,
                    },
                )
        except Exception as error:
            if is_connection_lost(error):  # an outage: one line when it starts, the round again soon
                stop.wait(min(interval_seconds, database.failed(error)))
                continue
            log.exception("retention failed")  # the next round tries again
        stop.wait(interval_seconds)
