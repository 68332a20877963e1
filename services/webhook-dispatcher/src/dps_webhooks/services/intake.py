"""Turning an event into deliveries: one per subscribed endpoint of its organization.

Used by the consumer (events from the api, a batch per transaction), test deliveries and manual
retries. The event row is the deduplication point: a redelivered message finds its id taken and
creates nothing. ``ACTIVE``
endpoints get a delivery due now; ``PAUSED`` ones a held delivery (sent after resume); ``DISABLED``
ones nothing, and nothing is backfilled later. A payload over 1 MB is stored as ``EXHAUSTED`` and
never sent; it does not count against the endpoint (the receiver did nothing wrong).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any
from uuid import UUID

from sqlalchemy import Row, func, select, update
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

    @cached_property
    def size(self) -> int:
        """The payload's size in bytes (measured once: a batch asks for each delivery)."""
        return len(self.body.encode())

    @property
    def oversized(self) -> bool:
        return self.size > MAX_PAYLOAD_BYTES


def accept_event(session: Session, event: IncomingEvent) -> int:
    """Store one event and its deliveries; 0 when the event was already accepted."""
    return accept_events(session, [event])


def accept_events(session: Session, events: list[IncomingEvent]) -> int:
    """Store a batch of events and their deliveries in a few statements; returns the number of
    deliveries created. Events already accepted (or repeated within the batch) create nothing."""
    stored = _store_new_events(session, events)
    if not stored:
        return 0
    by_organization: dict[UUID, list[Row]] = defaultdict(list)
    for endpoint in session.execute(
        select(WebhookEndpoint.id, WebhookEndpoint.organization_id, WebhookEndpoint.status, WebhookEndpoint.event_types)
        .where(
            WebhookEndpoint.organization_id.in_({event.organization_id for event in stored}),
            WebhookEndpoint.status != "DISABLED",
        )
        .order_by(WebhookEndpoint.id)
    ):
        by_organization[endpoint.organization_id].append(endpoint)
    now = session.scalar(select(func.now()))  # the transaction's now(), as add_delivery's rows get it
    rows = [
        delivery_row(event, endpoint.id, now=now, held=endpoint.status != "ACTIVE")
        for event in stored
        for endpoint in by_organization[event.organization_id]
        if _subscribed(endpoint.event_types, event.type)
    ]
    if rows:  # executemany with plain values: SQLAlchemy sends multi-row INSERTs and caches the statement
        session.execute(insert(WebhookDelivery.__table__), rows)
    if any(row["next_attempt_at"] is not None for row in rows):
        notify_due(session)
    return len(rows)


def _store_new_events(session: Session, events: list[IncomingEvent]) -> list[IncomingEvent]:
    """Insert the events not seen before (one statement); the ones inserted, in id order. Sorting
    keeps concurrent consumers from deadlocking on each other's uncommitted ids."""
    unique: dict[UUID, IncomingEvent] = {}
    for event in events:
        unique.setdefault(event.id, event)
    if not unique:
        return []
    ordered = [unique[event_id] for event_id in sorted(unique)]
    inserted = set(
        session.scalars(
            insert(WebhookEvent.__table__)
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(WebhookEvent.__table__.c.id, sort_by_parameter_order=False),
            [_event_row(event) for event in ordered],
        )
    )
    return [event for event in ordered if event.id in inserted]


def _subscribed(event_types: list[str], event_type: str) -> bool:
    return not event_types or event_type in event_types  # empty means every type


def store_event(session: Session, event: IncomingEvent) -> bool:
    """Insert the event once; False when its id is already known."""
    return bool(_store_new_events(session, [event]))


def _event_row(event: IncomingEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "organization_id": event.organization_id,
        "event_type": event.type,
        "occurred_at": event.occurred_at,
        "body": None if event.oversized else event.body,
        "body_bytes": event.size,
    }


def delivery_row(
    event: IncomingEvent,
    endpoint_id: UUID,
    *,
    now: Any,
    held: bool,
    is_test: bool = False,
    retry_of: UUID | None = None,
) -> dict[str, Any]:
    """The columns of a new delivery, the one source of its rules: due ``now``, held
    (``next_attempt_at`` NULL) or, when the payload is over the limit, ``EXHAUSTED`` at once.
    ``now`` is the transaction's time, as a value or as ``func.now()``."""
    oversized = event.oversized
    return {
        "id": new_id(),
        "organization_id": event.organization_id,
        "endpoint_id": endpoint_id,
        "event_id": event.id,
        "event_type": event.type,
        "status": "EXHAUSTED" if oversized else "PENDING",
        "is_test": is_test,
        "retry_of": retry_of,
        "attempt_count": 0,
        "next_attempt_at": None if oversized or held else now,
        "last_error_message": OVERSIZED_MESSAGE if oversized else None,
        "completed_at": now if oversized else None,
    }


def add_delivery(
    session: Session,
    event: IncomingEvent,
    endpoint_id: UUID,
    *,
    held: bool = False,
    is_test: bool = False,
    retry_of: UUID | None = None,
) -> WebhookDelivery:
    """A new delivery of a stored event (see ``delivery_row``), flushed so callers can render it."""
    row = delivery_row(event, endpoint_id, now=func.now(), held=held, is_test=is_test, retry_of=retry_of)
    delivery = WebhookDelivery(**row)
    if delivery.next_attempt_at is not None:
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
