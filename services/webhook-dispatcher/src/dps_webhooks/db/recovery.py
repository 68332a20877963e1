"""The statements of an endpoint's recovery (``services/recovery.py``): its exhausted deliveries not yet
redelivered and where the spread of its earlier recoveries ends (the new deliveries go in with
``db/deliveries.insert_deliveries``, as the intake's do).

A delivery's UUIDv7 id and its ``created_at`` are the same moment (the id is made as the row is, the
time is the transaction's), so bounds on the id a day wider than the window cut the scan to the
window's days (partitions and the ``(endpoint_id, id)`` index) while ``created_at`` decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from sqlalchemy import func, not_, select
from sqlalchemy.orm import Session, aliased

from dps_webhooks.db.id_bounds import first_id_at
from dps_webhooks.db.models import WebhookDelivery, WebhookEvent

Delivery, Event = WebhookDelivery, WebhookEvent
_SLACK = timedelta(days=1)  # the id bounds' margin around the window (clocks, the transaction's start)
_RECENT = timedelta(days=1)  # recoveries made this long ago or less may still be waiting their turn


@dataclass(frozen=True, slots=True)
class Exhausted:
    """An exhausted delivery to recover, with what a new delivery of its event needs."""

    delivery_id: UUID
    event_id: UUID
    event_type: str
    organization_id: UUID
    occurred_at: datetime
    body_bytes: int


def exhausted_not_redelivered(
    session: Session, endpoint_id: UUID, since: datetime, until: datetime, limit: int
) -> list[Exhausted]:
    """The endpoint's ``EXHAUSTED`` deliveries created in ``[since, until)``, oldest first, at most
    ``limit``: not test deliveries, not an event over the payload limit (undeliverable, spec section 3),
    and none that a later delivery already redelivers (``retry_of``: a recovery or a manual retry)."""
    low, high = first_id_at(since - _SLACK), first_id_at(until + _SLACK)
    redelivery = aliased(Delivery)
    redelivered = select(redelivery.retry_of).where(
        redelivery.endpoint_id == endpoint_id, redelivery.id >= low, redelivery.retry_of.is_not(None)
    )
    statement = (
        select(
            Delivery.id, Delivery.event_id, Delivery.event_type, Delivery.organization_id,
            Event.occurred_at, Event.body_bytes,
        )  # fmt: skip
        .join(Event, Event.id == Delivery.event_id)
        .where(
            Delivery.endpoint_id == endpoint_id,
            Delivery.id >= low,
            Delivery.id < high,
            Delivery.created_at >= since,
            Delivery.created_at < until,
            Delivery.status == "EXHAUSTED",
            Delivery.is_test.is_(False),
            Event.body.is_not(None),
            # NOT IN over the endpoint's redeliveries: one hashed set, not a probe per delivery
            not_(Delivery.id.in_(redelivered)),
        )
        .order_by(Delivery.created_at, Delivery.id)
        .limit(limit)
    )
    return [Exhausted(*row) for row in session.execute(statement)]


def spread_ends_in(session: Session, endpoint_id: UUID, now: datetime) -> float | None:
    """Seconds from the transaction's now() to the last redelivery of the endpoint not yet due (a
    recovery's spread still running); None when none waits. A next call continues after it."""
    seconds = session.scalar(
        select(func.extract("epoch", func.max(Delivery.next_attempt_at) - func.now())).where(
            Delivery.endpoint_id == endpoint_id,
            Delivery.id >= first_id_at(now - _RECENT),
            Delivery.retry_of.is_not(None),
            Delivery.status == "PENDING",
            Delivery.attempt_count == 0,
            Delivery.next_attempt_at >= func.now(),
        )
    )
    return None if seconds is None else float(seconds)
