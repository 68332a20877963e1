"""Deleting delivery history older than the retention period (spec: 30 days), periodically.

Deliveries go by their creation time, whatever their state (a delivery held on an endpoint paused
for longer than the retention period goes too); their attempts follow by cascade. Events go once
they are as old and no delivery refers to them. Work is done in small batches of rows locked with
``SKIP LOCKED``, so several replicas running this at once share it instead of queueing behind each
other, and no batch holds locks for long.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Delete, delete, exists, func, select

from dps_common.db import Transactions

from dps_webhooks.db.models import WebhookDelivery, WebhookEvent

log = logging.getLogger("dps.webhooks.retention")

BATCH_SIZE = 1000


def purge_expired(tx: Transactions, retention_days: float, batch_size: int = BATCH_SIZE) -> tuple[int, int]:
    """Delete what is past retention; (deliveries, events) deleted."""
    cutoff = func.now() - timedelta(days=retention_days)
    old_deliveries = (
        select(WebhookDelivery.id)
        .where(WebhookDelivery.created_at < cutoff)
        .limit(batch_size)
        .with_for_update(skip_locked=True)
    )
    unreferenced_events = (
        select(WebhookEvent.id)
        .where(WebhookEvent.received_at < cutoff, ~exists().where(WebhookDelivery.event_id == WebhookEvent.id))
        .limit(batch_size)
        .with_for_update(skip_locked=True)
    )
    deliveries = _in_batches(
        tx, delete(WebhookDelivery).where(WebhookDelivery.id.in_(old_deliveries.scalar_subquery())), batch_size
    )
    events = _in_batches(
        tx, delete(WebhookEvent).where(WebhookEvent.id.in_(unreferenced_events.scalar_subquery())), batch_size
    )
    return deliveries, events


def _in_batches(tx: Transactions, statement: Delete, batch_size: int) -> int:
    total = 0
    while True:
        with tx() as session:
            # The session answers a DELETE with a CursorResult but types it as a Result (SQLAlchemy's advice: cast).
            deleted = cast("CursorResult[Any]", session.execute(statement)).rowcount
        total += deleted
        if deleted < batch_size:
            return total


def run_retention(tx: Transactions, retention_days: float, interval_seconds: float, stop: threading.Event) -> None:
    """Purge now and then every ``interval_seconds`` until ``stop`` is set."""
    while not stop.is_set():
        try:
            deliveries, events = purge_expired(tx, retention_days)
            if deliveries or events:
                log.info("retention purged", extra={"deliveries": deliveries, "events": events})
        except Exception:
            log.exception("retention failed")  # the next round tries again
        stop.wait(interval_seconds)
