"""Writing events into the outbox, in the caller's transaction (the shared ``dps_common.outbox``),
only of the types the api's catalogue declares and documents."""

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy.orm import Session

from dps_common import outbox
from dps_common.outbox import OUTBOX_CHANNEL

from dps_api.schemas.events import EVENTS

__all__ = ["OUTBOX_CHANNEL", "record_event"]


def record_event(session: Session, event_type: str, organization_id: UUID, data: dict[str, Any], now: datetime) -> UUID:
    return outbox.record_event(session, EVENTS.declared(event_type), organization_id, data, now)
