"""Writing events: into the outbox, inside the caller's transaction, so a change and its event
commit together or not at all."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy.orm import Session

from dps_common.events import envelope
from dps_common.ids import new_id

from dps_api.db.models.outbox import OutboxEvent


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
    return event_id
