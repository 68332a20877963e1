"""The retention loop of the worker process: a round of the history's maintenance
(``services/retention.maintain``: partitions ahead, expired days dropped) now and then."""

from __future__ import annotations

import logging
import threading

from dps_common.db import Transactions

from dps_webhooks.services.retention import maintain

log = logging.getLogger("dps.webhooks.retention")


def run_retention(tx: Transactions, retention_days: float, interval_seconds: float, stop: threading.Event) -> None:
    """A round now and then every ``interval_seconds`` until ``stop`` is set."""
    while not stop.is_set():
        try:
            done = maintain(tx, retention_days)
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
        except Exception:
            log.exception("retention failed")  # the next round tries again
        stop.wait(interval_seconds)
