"""Bodies of ``GET /events`` and ``GET /events/{id}``: the organization's event log. (The catalogue
of event types and the events the dispatcher publishes are ``schemas/events.py`` and
``schemas/event_types.py``.)"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from dps_common.openapi.examples import example

from dps_webhooks.domain.event_views import EventView
from dps_webhooks.schemas import ResponseModel

_EVENT = {
    "id": "0192a3b4-c5d6-7e8f-9a0b-be1f2a3b4c5d", "type": "quote.approved",
    "occurredAt": "2026-11-02T09:59:59.512Z", "createdAt": "2026-11-02T10:00:00.031Z",
    "payloadBytes": 1874, "payloadKept": True,
}
_BODY = {
    "id": "0192a3b4-c5d6-7e8f-9a0b-be1f2a3b4c5d", "type": "quote.approved", "version": 1,
    "occurredAt": "2026-11-02T09:59:59.512Z", "organizationId": "0192a3b4-c5d6-7e8f-9a0b-0c1d2e3f4a5b",
    "data": {"id": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "status": "APPROVED", "currency": "USD"},
}


class Event(ResponseModel):
    model_config = example(_EVENT)
    id: str = Field(description="The event id: X-Service-Event-Id and webhook-id of every delivery of it.")
    type: str = Field(description="The event type, e.g. quote.approved (webhook.test for a test delivery's event).")
    occurredAt: datetime = Field(description="When it happened, as in the payload: order what you apply by it.")
    createdAt: datetime = Field(
        description="When the service received it: the list's order (newest first) and what createdAfter and "
        "createdBefore filter on."
    )
    payloadBytes: int = Field(description="The size of the payload in bytes, as sent.")
    payloadKept: bool = Field(
        description="false: the payload was over 1 MB, so it was never delivered and GET /events/{id} cannot "
        "give it (409 event_payload_not_kept)."
    )


class EventList(ResponseModel):
    model_config = example({"events": [_EVENT], "nextCursor": None})
    events: list[Event] = Field(description="Newest first (by createdAt, then id).")
    nextCursor: str | None


class EventBody(ResponseModel):
    """The event exactly as delivered: the same bytes every attempt sent and signed."""

    model_config = example(_BODY)
    id: str = Field(description="The event id, as in X-Service-Event-Id.")
    type: str
    version: int = Field(description="The envelope's version.")
    occurredAt: datetime
    organizationId: str
    data: dict[str, Any] = Field(description="The object as it stood after the change (the event type's schema).")


def render_event(event: EventView) -> dict[str, Any]:
    return {
        "id": str(event.id),
        "type": event.type,
        "occurredAt": event.occurred_at,
        "createdAt": event.received_at,
        "payloadBytes": event.payload_bytes,
        "payloadKept": event.payload_kept,
    }


def render_event_body(body: str) -> bytes:
    """The stored text as it was sent: re-serialising it could change a byte and so the signature."""
    return body.encode()
