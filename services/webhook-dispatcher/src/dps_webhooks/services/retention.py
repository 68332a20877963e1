"""The delivery history's maintenance, periodically: partitions ahead, retention (spec: 30 days).

Deliveries and their attempts are partitioned by day (``db/partitions.py``). Each round, in the
worker process:

- the partitions of today and the next ``DAYS_AHEAD`` days are created if missing, so the week ahead
  is ready even when rounds fail for days (meanwhile a missing day's rows go to the DEFAULT
  partitions: no insert fails);
- the days whose every delivery is past retention (the day ended ``retention_days`` ago or more)
  are dropped whole, attempts then deliveries: no row-by-row DELETE, nothing left to vacuum. A
  delivery is kept at least ``retention_days`` and at most a day longer;
- the DEFAULT partitions' rows past retention (normally none) are deleted by ``created_at`` in
  batches;
- an event goes only when both hold: it was received ``retention_days`` ago or more, and no delivery
  uses it any more. The events are the organization's event log (``GET /events``), kept as long as
  the history whether or not any endpoint was sent them; one a delivery still uses (a delivery of a
  day not yet dropped, a retry or a recovery of it) stays with that delivery, which reads its body.

Only one replica does the partitions' DDL at a time (a transaction advisory lock; the others skip it
that round), and the DDL waits at most ``LOCK_TIMEOUT`` for the parents' locks, so it never keeps
the claims, records and reads queued behind it for longer: when it cannot have them it gives up and
the next round tries again. The batched deletes lock rows with ``SKIP LOCKED``, so replicas share
them. All times come from the database clock. The worker process runs a round now and then
(``workers/retention.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Delete, column, delete, exists, func, select, table, text
from sqlalchemy.exc import OperationalError

from dps_common.db import Transactions

from dps_webhooks.db import partitions
from dps_webhooks.db.models import WebhookDelivery, WebhookEvent

log = logging.getLogger("dps.webhooks.retention")

BATCH_SIZE = 1000
DAYS_AHEAD = 7
LOCK_TIMEOUT = "2s"
# one replica at a time does the partitions' DDL (an arbitrary constant key of this service's)
_PARTITIONS_LOCK = 0x77685F7061727473


@dataclass
class Maintenance:
    """What one round did."""

    created: list[date] = field(default_factory=list)  # days whose partitions were created
    dropped: list[date] = field(default_factory=list)  # days whose partitions were dropped
    deliveries: int = 0  # deleted from the DEFAULT partition
    events: int = 0  # past retention and used by no delivery
    postponed: bool = False  # the DDL could not have its locks in time (or another replica has it)


def maintain(tx: Transactions, retention_days: float, *, batch_size: int = BATCH_SIZE) -> Maintenance:
    """One round: partitions ahead, expired days dropped, the DEFAULT partition and events purged."""
    done = Maintenance()
    try:
        with tx() as session:
            connection = session.connection()
            if connection.execute(_TRY_LOCK, {"key": _PARTITIONS_LOCK}).scalar():
                connection.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
                now: datetime = connection.execute(_NOW_UTC).scalar_one()
                today = now.date()
                done.created = partitions.ensure_days(
                    connection, [today + timedelta(days=n) for n in range(DAYS_AHEAD + 1)]
                )
                # a day is past retention once its end is: days before the cutoff's own day
                cutoff_day = (now - timedelta(days=retention_days)).date()
                done.dropped = [day for day in partitions.existing_days(connection) if day < cutoff_day]
                for day in done.dropped:
                    partitions.drop_day(connection, day)
            else:
                done.postponed = True
    except OperationalError as exc:  # lock_timeout (55P03) or a deadlock with a reader: next round
        log.warning("partition maintenance postponed", extra={"error": type(exc.orig).__name__})
        done.created, done.dropped, done.postponed = [], [], True
    cutoff = func.now() - timedelta(days=retention_days)
    stray_deliveries = (
        select(_DEFAULT_DELIVERIES.c.id)
        .where(_DEFAULT_DELIVERIES.c.created_at < cutoff)
        .limit(batch_size)
        .with_for_update(skip_locked=True)
    )
    # the event log's rule: past retention AND used by no delivery (ix_webhook_events_received_at, and
    # each day's ix_webhook_deliveries_event_id for the check)
    unreferenced_events = (
        select(WebhookEvent.id)
        .where(WebhookEvent.received_at < cutoff, ~exists().where(WebhookDelivery.event_id == WebhookEvent.id))
        .limit(batch_size)
        .with_for_update(skip_locked=True)
    )
    # from the DEFAULT partition itself (its attempts go by its foreign key's cascade)
    done.deliveries = _in_batches(
        tx,
        delete(_DEFAULT_DELIVERIES).where(_DEFAULT_DELIVERIES.c.id.in_(stray_deliveries.scalar_subquery())),
        batch_size,
    )
    done.events = _in_batches(
        tx, delete(WebhookEvent).where(WebhookEvent.id.in_(unreferenced_events.scalar_subquery())), batch_size
    )
    return done


_TRY_LOCK = text("SELECT pg_try_advisory_xact_lock(:key)")
_NOW_UTC = text("SELECT now() AT TIME ZONE 'UTC'")
_DEFAULT_DELIVERIES = table(
    f"{partitions.DELIVERIES}_default", column("id"), column("created_at"), schema=partitions.SCHEMA
)


def _in_batches(tx: Transactions, statement: Delete, batch_size: int) -> int:
    total = 0
    while True:
        with tx() as session:
            # The session answers a DELETE with a CursorResult but types it as a Result (SQLAlchemy's advice: cast).
            deleted = cast("CursorResult[Any]", session.execute(statement)).rowcount
        total += deleted
        if deleted < batch_size:
            return total
