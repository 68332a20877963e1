"""Turning an event into deliveries: one per subscribed endpoint of its organization.

Used by the consumer (events from the api), test deliveries and manual retries. The event row is
the deduplication point: a redelivered message finds its id taken and creates nothing. ``ACTIVE``
endpoints get a delivery due now; ``PAUSED`` ones a held delivery (sent after resume); ``DISABLED``
ones nothing, and nothing is backfilled later. A payload over 1 MB is stored as ``EXHAUSTED`` and
never sent; it does not count against the endpoint (the receiver did nothing wrong).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from dps_common.http.json import loads
from dps_common.ids import new_id

from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

MAX_PAYLOAD_BYTES = 1024 * 1024  # spec section 8
DELIVERIES_CHANNEL = "webhook_deliveries"  # NOTIFY wakes idle workers when deliveries become due
OVERSIZED_MESSAGE = "The payload is larger than 1 MB; it is not delivered."


@dataclass(frozen=True)
class IncomingEvent:
    id: UUID
    organization_id: UUID
    type: str
    occurred_at: datetime
    body: str  # the envelope exactly as it will be sent and signed

    @classmethod
    def from_envelope(cls, body: str) -> "IncomingEvent":
        """Parse a published envelope; ``ValueError`` when it is not one."""
        envelope: dict[str, Any] = loads(body)
        try:
            return cls(
                UUID(envelope["id"]),
                UUID(envelope["organizationId"]),
                str(envelope["type"]),
                datetime.fromisoformat(envelope["occurredAt"]),
                body,
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not an event envelope: {exc}") from exc

    @property
    def oversized(self) -> bool:
        return len(self.body.encode()) > MAX_PAYLOAD_BYTES


def accept_event(session: Session, event: IncomingEvent) -> int:
    """Store the event and its deliveries; 0 when the event was already accepted."""
    if not store_event(session, event):
        return 0
    subscribed = session.execute(
        select(WebhookEndpoint.id, WebhookEndpoint.status).where(
            WebhookEndpoint.organization_id == event.organization_id,
            WebhookEndpoint.status != "DISABLED",
            or_(func.cardinality(WebhookEndpoint.event_types) == 0, WebhookEndpoint.event_types.any_() == event.type),
        )
    ).all()
    for endpoint_id, status in subscribed:
        add_delivery(session, event, endpoint_id, held=status != "ACTIVE")
    return len(subscribed)


def store_event(session: Session, event: IncomingEvent) -> bool:
    """Insert the event once; False when its id is already known."""
    size = len(event.body.encode())
    stored = session.execute(
        insert(WebhookEvent)
        .values(
            id=event.id,
            organization_id=event.organization_id,
            event_type=event.type,
            occurred_at=event.occurred_at,
            body=None if size > MAX_PAYLOAD_BYTES else event.body,
            body_bytes=size,
        )
        .on_conflict_do_nothing(index_elements=[WebhookEvent.id])
        .returning(WebhookEvent.id)
    ).scalar()
    return stored is not None


def add_delivery(
    session: Session,
    event: IncomingEvent,
    endpoint_id: UUID,
    *,
    held: bool = False,
    is_test: bool = False,
    retry_of: UUID | None = None,
) -> WebhookDelivery:
    """A new delivery of a stored event: due now, held (``next_attempt_at`` NULL) or, when the
    payload is over the limit, ``EXHAUSTED`` at once."""
    delivery = WebhookDelivery(
        id=new_id(),
        organization_id=event.organization_id,
        endpoint_id=endpoint_id,
        event_id=event.id,
        event_type=event.type,
        status="PENDING",
        is_test=is_test,
        retry_of=retry_of,
        attempt_count=0,
    )
    if event.oversized:
        delivery.status = "EXHAUSTED"
        delivery.last_error_message = OVERSIZED_MESSAGE
        delivery.completed_at = func.now()
    elif not held:
        delivery.next_attempt_at = func.now()
        notify_due(session)
    session.add(delivery)
    session.flush()
    return delivery


def notify_due(session: Session) -> None:
    """Wake the workers when this transaction commits (PostgreSQL folds repeats into one)."""
    session.execute(select(func.pg_notify(DELIVERIES_CHANNEL, "")))


def hold_pending(session: Session, endpoint_id: UUID, *, keep_tests: bool) -> None:
    """Unschedule the endpoint's unfinished deliveries (pause, disable). Test deliveries stay
    scheduled on a paused endpoint: they are sent even then."""
    conditions = [
        WebhookDelivery.endpoint_id == endpoint_id,
        WebhookDelivery.next_attempt_at.is_not(None),
    ]
    if keep_tests:
        conditions.append(WebhookDelivery.is_test.is_(False))
    session.execute(update(WebhookDelivery).where(*conditions).values(next_attempt_at=None))


def release_held(session: Session, endpoint_id: UUID) -> None:
    """Schedule the endpoint's held deliveries now (resume, re-enable)."""
    released = session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.endpoint_id == endpoint_id,
            WebhookDelivery.status.in_(("PENDING", "FAILED")),
            WebhookDelivery.next_attempt_at.is_(None),
        )
        .values(next_attempt_at=func.now())
    )
    if released.rowcount:
        notify_due(session)
