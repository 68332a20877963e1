"""The relay loop: drain the outbox, then sleep until notified or the poll interval passes (30 s: a
safety net only, since every insert into the outbox notifies at commit).

A notification that wakes an idle relay is followed by a short linger (``RELAY_LINGER_SECONDS``,
100 ms) before the claim, so that a steady trickle of commits goes out in batches (one transaction,
one wait for the broker's confirms) rather than one event per turn; the notifications that arrived
meanwhile are dropped right before the claim, which finds their rows. A backlog is drained in full
batches without lingering.

A broker or database failure drops the broken connection and backs off (0.5 s doubling to 15 s);
the loop then starts over, so restarts of either are ridden out without losing anything (a database
outage is logged once when it starts and once when it ends). Each turn
and each batch beats the relay's ``heartbeat`` (its liveness), and each batch updates
``dps_common.outbox.relay.metrics``.
"""

from __future__ import annotations

import logging
import threading
import time

import psycopg
from sqlalchemy.exc import SQLAlchemyError

from dps_common.db import Transactions
from dps_common.db_retry import OutageLog
from dps_common.messaging import Backoff, EventPublisher, Published, PublishFailed
from dps_common.outbox.relay import metrics
from dps_common.outbox.relay.batches import OUTBOX_QUEUE, Claimed, claim, mark_published
from dps_common.outbox.relay.settings import RelaySettings
from dps_common.process_server import Heartbeat

log = logging.getLogger("dps.relay")

IDLE_SLICE_SECONDS = 1.0  # how often an idle relay looks at ``stop`` and the broker's heartbeat (a wake-up each)


class OutboxRelay:
    def __init__(self, settings: RelaySettings, tx: Transactions):
        self.settings = settings
        self._tx = tx
        self._publisher = EventPublisher(settings.amqp_url, settings.events_exchange)
        # the LISTEN connection: every insert into the outbox notifies OUTBOX_CHANNEL (the table's
        # statement trigger, dps_common.outbox.migration), delivered at commit; without it the relay still polls
        self._wakeup = OUTBOX_QUEUE.wakeup(settings.database_url, settings.application_name + "-listen")
        self.published = 0  # events confirmed and marked by this relay
        # its liveness: beaten at every turn and every idle slice
        self.heartbeat = Heartbeat("relay loop", IDLE_SLICE_SECONDS)

    def run(self, stop: threading.Event) -> None:
        """Relay until ``stop`` is set; returns after at most one batch and one poll interval."""
        backoff = Backoff()
        database = OutageLog(log, "outbox relay")
        try:
            while not stop.is_set():
                self.heartbeat.beat()
                try:
                    self._wakeup.listen()
                    self._publisher.connect()
                    self._wakeup.drain()  # what they announce, the claim below finds
                    while not stop.is_set() and self.relay_batch() == self.settings.batch_size:
                        self.heartbeat.beat()  # a full batch: more may be waiting, and a backlog is progress
                    backoff.reset()
                    database.succeeded()
                except PublishFailed as exc:
                    log.warning("events not published; retrying", extra={"error": str(exc)})
                    backoff.wait(stop)
                    continue
                except (SQLAlchemyError, psycopg.Error) as exc:
                    database.failed(exc)  # logged once per outage, not at every try
                    self._wakeup.close()
                    backoff.wait(stop)
                    continue
                except Exception:  # a surprise: start over on fresh connections rather than exit
                    log.exception("relay failed; restarting")
                    self._publisher.close()
                    self._wakeup.close()
                    backoff.wait(stop)
                    continue
                if self._idle(stop):
                    stop.wait(self.settings.linger_seconds)
        finally:
            self._publisher.close()
            self._wakeup.close()

    def _idle(self, stop: threading.Event) -> bool:
        """Wait for a notification or the poll interval, in slices short enough to notice ``stop``
        promptly and to keep the broker connection's heartbeats going; True when notified."""
        deadline = time.monotonic() + self.settings.poll_interval_seconds
        while not stop.is_set():
            self.heartbeat.beat()
            self._publisher.heartbeat()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self._wakeup.wait(min(remaining, IDLE_SLICE_SECONDS)):
                return True
        return False

    def relay_batch(self) -> int:
        """Publish one batch and mark what the broker confirmed; the number of rows claimed.

        The batch is sent at once and its confirms awaited once. When the broker fails midway, or
        returns or refuses some events, the rows it confirmed are still marked (fewer duplicates),
        the rest are released unmarked, and ``PublishFailed`` is raised."""
        with self._tx.write_cursor() as cursor:
            batch = claim(cursor, self.settings.batch_size, self.settings.shards)
            published = self._publisher.publish_batch(batch.events)
            confirmed_at = time.time()  # wall clock, as occurred_at is
            mark_published(cursor, published.confirmed)
        self.published += len(published.confirmed)
        _count(batch, published, confirmed_at)
        if published.confirmed:
            log.info("events published", extra={"count": len(published.confirmed)})
        if published.failure is not None:
            raise published.failure
        return len(batch.events)


def _count(batch: Claimed, published: Published, confirmed_at: float) -> None:
    """A committed batch's metrics: what was published, how long after it occurred, what was not."""
    if not batch.events:
        return
    metrics.EVENTS_PUBLISHED.inc(len(published.confirmed))
    for event_id in published.confirmed:
        # never negative: the writer's clock (occurred_at) and this host's may differ a little
        metrics.PUBLISH_DELAY_SECONDS.observe(max(0.0, confirmed_at - batch.occurred_at[event_id].timestamp()))
    if published.failure is None:
        metrics.BATCHES_CONFIRMED.inc()
    else:
        metrics.BATCHES_FAILED.inc()
        metrics.EVENTS_NOT_PUBLISHED.inc(len(batch.events) - len(published.confirmed))
