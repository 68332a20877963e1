"""The organization's event log (``GET /events``, ``GET /events/{id}``): what happened, as the
dispatcher received it, whether or not any endpoint was sent it, kept as long as the delivery history
(``WEBHOOK_RETENTION_DAYS``, 30 days: ``services/retention.py``).

An event's body is the exact text every attempt of every delivery sent and signed (the intake stores
the envelope as published, ``services/intake.py``), so a client that missed deliveries gets the very
bytes it would have verified. An event over the 1 MB payload limit was never delivered and its body
was not kept: reading it is ``EventPayloadNotKept``.
"""

from __future__ import annotations

from uuid import UUID

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import Conflict, not_found
from dps_common.paging import PageRequest

from dps_webhooks.db import events as store
from dps_webhooks.db.models import WebhookEvent
from dps_webhooks.domain.event_views import EventFilter, EventView

WHAT = "Event"


class EventPayloadNotKept(Conflict):
    code = "event_payload_not_kept"


def event_view(row: WebhookEvent) -> EventView:
    return EventView(
        id=row.id,
        type=row.event_type,
        occurred_at=row.occurred_at,
        received_at=row.received_at,
        payload_bytes=row.body_bytes,
        payload_kept=row.body is not None,
    )


class EventLog:
    def __init__(self, tx: Transactions):
        self._tx = tx

    def list_events(self, principal: Principal, filters: EventFilter, page: PageRequest) -> list[EventView]:
        """``limit + 1`` of the caller's organization's events after the page's position, newest first."""
        with self._tx.read() as session:
            rows = store.page_of_events(session, principal.organization_id, filters, page)
            return [event_view(row) for row in rows]

    def event_body(self, principal: Principal, event_id: UUID) -> str:
        """The event exactly as every attempt sent it; 404 for an unknown or another organization's
        event, 409 ``event_payload_not_kept`` for one over the payload limit."""
        with self._tx.read() as session:
            row = store.organization_event(session, principal.organization_id, event_id)
            if row is None:
                raise not_found(WHAT)
            if row.body is None:
                raise EventPayloadNotKept(
                    f"The event's payload was {row.body_bytes} bytes, over the 1 MB limit: it was never delivered "
                    "and its body was not kept. GET /events lists it with payloadKept false.",
                    extra={"eventId": str(row.id), "payloadBytes": row.body_bytes},
                )
            return row.body
