"""Writing events into the outbox, in the caller's transaction (the shared ``dps_common.outbox``),
only of the types the api's catalogue declares and documents; and the internal ones (``internal.*``,
for the other services' processes: key events), which no catalogue documents and no webhook carries."""

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy.orm import Session

from dps_common import outbox
from dps_common.auth.revocations import KEY_EVENTS
from dps_common.events.catalogue import UnknownEventType
from dps_common.outbox import OUTBOX_CHANNEL

from dps_api.schemas.events import EVENTS

__all__ = ["OUTBOX_CHANNEL", "record_event", "record_internal_event"]

INTERNAL_EVENTS = frozenset(KEY_EVENTS)


def record_event(session: Session, event_type: str, organization_id: UUID, data: dict[str, Any], now: datetime) -> UUID:
    return outbox.record_event(session, EVENTS.declared(event_type), organization_id, data, now)


def record_internal_event(
    session: Session, event_type: str, organization_id: UUID, data: dict[str, Any], now: datetime
) -> UUID:
    if event_type not in INTERNAL_EVENTS:
        raise UnknownEventType(f"event type {event_type!r} is not an internal event")
    return outbox.record_event(session, event_type, organization_id, data, now)
