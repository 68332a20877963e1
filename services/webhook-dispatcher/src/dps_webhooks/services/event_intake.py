"""The event consumer's use case: a batch of events and their deliveries stored in one transaction.

One commit (one fsync) per batch instead of per event is what lets the consumer keep up with bursts;
``accept_events`` deduplicates on the event ids, so a batch redelivered after a crash between the
commit and the acks creates nothing. In a worker process the deliveries its own worker can start
soon are stored already claimed and handed to it (``hand_over``, given at composition): they skip the
claim statement and the wake-up of every worker.
"""

from __future__ import annotations

import psycopg
from sqlalchemy.exc import DataError, IntegrityError

from dps_common.db import Transactions

from dps_webhooks.adapters import metrics
from dps_webhooks.services.hand_over import HandOver, NoHandOver
from dps_webhooks.services.intake import Accepted, IncomingEvent, accept_batch


class EventsRefused(Exception):
    """The database refused the batch: some event of it holds a value it can never store."""


class EventIntake:
    def __init__(self, tx: Transactions, *, hand_over: HandOver | None = None, lease_seconds: float = 0.0):
        self._tx = tx
        self._hand_over: HandOver = hand_over if hand_over is not None else NoHandOver()
        self._lease_seconds = lease_seconds

    def accept(self, events: list[IncomingEvent]) -> Accepted:
        """Store the events and their deliveries, then start the ones handed over. Raises
        ``EventsRefused`` when the database refuses the batch, and whatever the database raises when
        it fails; nothing is stored then."""
        self._hand_over.wait_for_room(len(events))
        taken = 0

        def take_up_to(count: int) -> int:
            nonlocal taken
            taken = self._hand_over.take_on(count)
            return taken

        try:
            with self._tx.write_cursor() as cursor:  # a driver cursor: no session per batch
                accepted = accept_batch(cursor, events, take_up_to=take_up_to, lease_seconds=self._lease_seconds)
        except Exception as exc:
            if taken:
                self._hand_over.give_back(taken)  # stored nothing
            if isinstance(exc, DataError | IntegrityError):
                raise EventsRefused(str(exc.orig)) from exc
            if isinstance(exc, psycopg.DataError | psycopg.IntegrityError):
                raise EventsRefused(str(exc)) from exc
            raise
        metrics.EVENTS_ACCEPTED.inc(len(events))  # a redelivered one too (it creates nothing)
        metrics.DELIVERIES_CREATED.inc(accepted.deliveries)
        metrics.DELIVERIES_HANDED_OVER.inc(len(accepted.claimed))
        self._hand_over.start(accepted.claimed)
        return accepted
