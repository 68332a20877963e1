"""The organization's events as the event log's use cases return them (``GET /events``): plain
values, no rows, no JSON. ``dps_webhooks.schemas.event_log`` renders them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True, slots=True)
class EventView:
    id: UUID  # the envelope's id: X-Service-Event-Id, webhook-id
    type: str
    occurred_at: datetime  # the envelope's occurredAt, as the publisher set it
    received_at: datetime  # when the dispatcher stored it: the list's order and its time filters
    payload_bytes: int
    payload_kept: bool  # False: over the 1 MB payload limit, never delivered and its body not kept


@dataclass(frozen=True, slots=True)
class EventFilter:
    """The list's filters: one type, and a half-open window ``[received_after, received_before)``."""

    type: str | None = None
    received_after: datetime | None = None
    received_before: datetime | None = None


def list_position(received_at: datetime, event_id: UUID | str) -> list[str]:
    """An event's place in the list, newest first by receipt then id: a cursor's position (the store
    reads it back, ``db/events.py``)."""
    return [received_at.isoformat(), str(event_id)]
