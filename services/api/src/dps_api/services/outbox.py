"""Writing events: into the outbox, inside the caller's transaction, so a change and its event
commit together or not at all."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dps_common.events import envelope
from dps_common.ids import new_id

from dps_api.db.models.outbox import OutboxEvent

OUTBOX_CHANNEL = "outbox_events"  # NOTIFY wakes the relays when events commit


def record_event(session: Session, event_type: str, organization_id: UUID, data: dict[str, Any], now: datetime) -> UUID:
    event_id = new_id()
    session.add(
        OutboxEvent(
            id=event_id,
            organization_id=organization_id,
            event_type=event_type,
            occurred_at=now,
            envelope=envelope(event_type, organization_id, data, event_id=event_id, occurred_at=now),
        )
    )
    # delivered at commit, never for a rolled-back change; PostgreSQL folds repeats into one
    with session.no_autoflush:  # the row is flushed when the caller's flow would flush it anyway
        session.execute(select(func.pg_notify(OUTBOX_CHANNEL, "")))
    return event_id
