"""The delivery work queue in the database: claims, the wake-up channel, holding and releasing.

Shared by the intake (``services/intake.py``, which stores a consuming worker's deliveries already
claimed), the endpoint use cases (pause, resume, revoke) and the delivery worker (``delivery/``), so
that none of them reaches into another's package.

A claim is one statement: it locks due rows with ``FOR UPDATE SKIP LOCKED`` (so workers never take
the same row), moves their ``next_attempt_at`` one lease ahead and stamps them with the claim's
token. If the worker dies, the row falls due again when the lease ends and another worker takes it
up. Only the holder of the current token may record the outcome: a worker whose lease ran out
(and whose attempt another worker may be repeating) records nothing.

The attempt number is counted at the claim. A row still carrying a token was claimed and never
recorded (its worker died), so taking it over repeats that attempt's number instead of spending a
new one: the receiver may see the same ``X-Service-Attempt`` twice, never a ninth attempt.

All times come from the database clock (``now()``), never a worker's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast
from uuid import UUID

from sqlalchemy import ColumnElement, CursorResult, Interval, and_, bindparam, case, func, or_, select, update
from sqlalchemy.orm import Session

from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

DELIVERIES_CHANNEL = "webhook_deliveries"  # NOTIFY wakes idle workers when deliveries become due

Delivery, Endpoint, Event = WebhookDelivery, WebhookEndpoint, WebhookEvent


@dataclass(frozen=True)
class Claimed:
    """One claimed delivery: everything its attempt needs."""

    delivery_id: UUID
    endpoint_id: UUID
    event_id: UUID
    attempt: int
    is_test: bool
    url: str
    secret_sealed: bytes
    body: str
    token: UUID
    request_id: str | None = None  # the event's: the request that caused it, for the attempt's log lines


def first_claim(token: UUID, lease_seconds: float) -> dict[str, Any]:
    """The columns a claim leaves on a delivery stored already claimed (attempt 1, the claim's
    token, due again when the lease ends), with the time as an offset from the statement's now()."""
    return {"attempt_count": 1, "claim_token": token, "next_attempt_at": timedelta(seconds=lease_seconds)}


def _sendable() -> ColumnElement[bool]:
    """Deliveries are sent to ACTIVE endpoints; test deliveries also to PAUSED ones."""
    return or_(Endpoint.status == "ACTIVE", and_(Delivery.is_test, Endpoint.status == "PAUSED"))


# Built once: building the statement costs more than running it on this hot path.
_CLAIM = (
    update(Delivery)
    .where(
        Delivery.id.in_(
            select(Delivery.id)
            .join(Endpoint, Endpoint.id == Delivery.endpoint_id)
            .where(Delivery.next_attempt_at <= func.now(), _sendable())
            .order_by(Delivery.next_attempt_at)
            .limit(bindparam("limit"))
            .with_for_update(of=Delivery, skip_locked=True)
            .scalar_subquery()
        ),
        Endpoint.id == Delivery.endpoint_id,
        Event.id == Delivery.event_id,
    )
    .values(
        next_attempt_at=func.now() + bindparam("lease", type_=Interval()),
        claim_token=bindparam("token"),
        attempt_count=Delivery.attempt_count + case((Delivery.claim_token.is_(None), 1), else_=0),
    )
    .returning(
        Delivery.id,
        Delivery.endpoint_id,
        Delivery.event_id,
        Delivery.attempt_count,
        Delivery.is_test,
        Endpoint.url,
        Endpoint.secret_sealed,
        Event.body,
        Event.request_id,  # the events row is joined for its body already: no extra cost
    )
)


def claim_due(session: Session, limit: int, lease_seconds: float) -> list[Claimed]:
    """Up to ``limit`` due deliveries, most overdue first, claimed under a new token for a lease."""
    token = uuid.uuid4()
    parameters = {"limit": limit, "lease": timedelta(seconds=lease_seconds), "token": token}
    rows = session.connection().execute(_CLAIM, parameters).all()
    claimed = []
    for delivery_id, endpoint_id, event_id, attempt, is_test, url, secret_sealed, body, request_id in rows:
        # A due delivery's event has its body: an oversized one is stored final, never due.
        assert body is not None
        claimed.append(
            Claimed(delivery_id, endpoint_id, event_id, attempt, is_test, url, secret_sealed, body, token, request_id)
        )
    return claimed


def notify_due(session: Session) -> None:
    """Wake the workers when this transaction commits (PostgreSQL folds repeats into one)."""
    session.connection().execute(_NOTIFY_DUE)


_NOTIFY_DUE = select(func.pg_notify(DELIVERIES_CHANNEL, ""))


def hold_pending(session: Session, endpoint_id: UUID, *, keep_tests: bool) -> None:
    """Unschedule the endpoint's unfinished deliveries (pause, disable). Test deliveries stay
    scheduled on a paused endpoint: they are sent even then."""
    conditions = [Delivery.endpoint_id == endpoint_id, Delivery.next_attempt_at.is_not(None)]
    if keep_tests:
        conditions.append(Delivery.is_test.is_(False))
    session.execute(update(Delivery).where(*conditions).values(next_attempt_at=None))


def release_held(session: Session, endpoint_id: UUID) -> None:
    """Schedule the endpoint's held deliveries now (resume, re-enable)."""
    statement = (
        update(Delivery)
        .where(
            Delivery.endpoint_id == endpoint_id,
            Delivery.status.in_(("PENDING", "FAILED")),
            Delivery.next_attempt_at.is_(None),
        )
        .values(next_attempt_at=func.now())
    )
    # The session answers an UPDATE with a CursorResult but types it as a Result (SQLAlchemy's advice: cast).
    released = cast("CursorResult[Any]", session.execute(statement))
    if released.rowcount:
        notify_due(session)
