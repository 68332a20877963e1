"""The outbox as the use cases see it (``Outbox``): a use case records each event with its subject,
the view after the change, in its own transaction; the outbox adapter (``dps_api.adapters.outbox``,
given to the use cases by whoever builds them) renders it and writes the rows. Use cases never render.

The internal events (``internal.*``, for the other services' processes: key events) carry plain data
made by ``dps_common.auth.revocations``; no catalogue documents them and no webhook carries them."""

from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from sqlalchemy.orm import Session

from dps_common import outbox
from dps_common.auth.revocations import KEY_EVENTS
from dps_common.events.catalogue import UnknownEventType
from dps_common.outbox import OUTBOX_CHANNEL

from dps_api.domain.events import RecordedEvents

__all__ = ["OUTBOX_CHANNEL", "Outbox", "record_internal_event"]

INTERNAL_EVENTS = frozenset(KEY_EVENTS)


class Outbox(Protocol):
    def record(
        self, session: Session, subject: Any, organization_id: UUID, now: datetime, *event_types: str
    ) -> RecordedEvents:
        """Writes one event of each type (declared by the api's catalogue) about ``subject`` into the
        outbox, in ``session``'s transaction; the events share their data, ``subject`` rendered once."""
        ...


def record_internal_event(
    session: Session, event_type: str, organization_id: UUID, data: dict[str, Any], now: datetime
) -> UUID:
    if event_type not in INTERNAL_EVENTS:
        raise UnknownEventType(f"event type {event_type!r} is not an internal event")
    return outbox.record_event(session, event_type, organization_id, data, now)
