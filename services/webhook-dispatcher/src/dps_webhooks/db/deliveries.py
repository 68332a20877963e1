"""The deliveries' store: the work queue in the database (claims, the wake-up channel, holding and
releasing).

Shared by the intake (``services/intake.py``, which stores a consuming worker's deliveries already
claimed), the endpoint use cases (pause, resume, revoke) and the delivery loop's use case
(``services/attempts.py``).

The queue is a ``dps_common.work_queue.WorkQueue`` (claims under a lease with ``FOR UPDATE SKIP
LOCKED``, a token per claim, ``NOTIFY`` on ``DELIVERIES_CHANNEL``): a delivery's ``next_attempt_at``
is both when it is due and, while claimed, when its lease ends, so a delivery whose worker died falls
due again and another worker takes it up. Only the holder of the current token records the outcome
(``services/recording.py``).

The attempt number is counted at the claim, in the statement that claims it, before anything is
sent: every claim is a new attempt. A row still carrying a token was claimed and never recorded (its
worker died, most likely mid-send), so taking it over makes the next attempt: the receiver never sees
one ``X-Service-Attempt`` twice, and an attempt cut short counts toward the 8 (it was started; its
result is unknown). Taking over a row whose last allowed attempt was cut short makes no ninth attempt:
the worker records that one as interrupted and the delivery EXHAUSTED (``services/recording.py``).

All times come from the database clock (``now()``), never a worker's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast
from uuid import UUID

from sqlalchemy import (
    Boolean,
    ColumnElement,
    CursorResult,
    Integer,
    Interval,
    String,
    Text,
    Uuid,
    and_,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from dps_common.work_queue import WorkQueue

from dps_webhooks.db.arrays import as_arrays, unnested
from dps_webhooks.db.base import Base
from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from dps_webhooks.domain.claims import Claimed

DELIVERIES_CHANNEL = "webhook_deliveries"  # NOTIFY wakes idle workers when deliveries become due

Delivery, Endpoint, Event = WebhookDelivery, WebhookEndpoint, WebhookEvent


def first_claim(token: UUID, lease_seconds: float) -> dict[str, Any]:
    """The columns a claim leaves on a delivery stored already claimed (attempt 1, the claim's
    token, due again when the lease ends), with the time as an offset from the statement's now()."""
    return {"attempt_count": 1, **DELIVERIES.first_claim(token, lease_seconds)}


def _sendable() -> ColumnElement[bool]:
    """Deliveries are sent to ACTIVE endpoints; test deliveries also to PAUSED ones."""
    return or_(Endpoint.status == "ACTIVE", and_(Delivery.is_test, Endpoint.status == "PAUSED"))


DELIVERIES = WorkQueue(
    Delivery,
    Delivery.id,
    due=(Delivery.next_attempt_at <= func.now()) & _sendable(),
    order_by=Delivery.next_attempt_at,  # most overdue first
    channel=DELIVERIES_CHANNEL,
    lease_until=Delivery.next_attempt_at,
    token=Delivery.claim_token,
    joined=[(Endpoint, Endpoint.id == Delivery.endpoint_id)],
    lock_of=Delivery,
)

# Built once: building the statement costs more than running it on this hot path.
_CLAIM = DELIVERIES.claim_statement(
    where=[Endpoint.id == Delivery.endpoint_id, Event.id == Delivery.event_id],
    values={"attempt_count": Delivery.attempt_count + 1},
    returning=[
        Delivery.id,
        Delivery.endpoint_id,
        Delivery.event_id,
        Delivery.attempt_count,
        Delivery.is_test,
        Endpoint.url,
        Endpoint.secret_sealed,
        Event.body,
        Event.request_id,  # the events row is joined for its body already: no extra cost
        Endpoint.rate_limit_per_second,  # the endpoint is joined already: its throttle, as of the claim
    ],
)


def claim_due(session: Session, limit: int, lease_seconds: float) -> list[Claimed]:
    """Up to ``limit`` due deliveries, most overdue first, claimed under a new token for a lease."""
    token, rows = DELIVERIES.claim(session, _CLAIM, limit, lease_seconds)
    claimed = []
    for delivery_id, endpoint_id, event_id, attempt, is_test, url, secret_sealed, body, request_id, rate in rows:
        # A due delivery's event has its body: an oversized one is stored final, never due.
        assert body is not None
        claimed.append(
            Claimed(delivery_id, endpoint_id, event_id, attempt, is_test, url, secret_sealed, body, token, request_id, rate)
        )
    return claimed


# The earliest delivery a claim may take later: a retry, a delivery put back for its throttle turn, a
# recovery's spread, a lease that ends (its worker died or is slow). Only those not due yet: one due
# now that the claim did not take is another worker's (SKIP LOCKED) or beyond the claim's limit.
_NEXT_DUE = (
    select(func.extract("epoch", Delivery.next_attempt_at - func.now()))
    .join(Endpoint, Endpoint.id == Delivery.endpoint_id)
    .where(Delivery.next_attempt_at > func.now(), _sendable())
    .order_by(Delivery.next_attempt_at)
    .limit(1)
)


def seconds_to_next_due(session: Session) -> float | None:
    """How long until the next delivery falls due (as of this transaction's start), None when none
    will: read after a claim, it is when the delivery loop looks again with no notification."""
    seconds = session.connection().execute(_NEXT_DUE).scalar()
    return None if seconds is None else float(seconds)


notify_due = DELIVERIES.notify  # wake the workers when this transaction commits


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


# New deliveries in one statement, whatever their number: rows of ``intake.delivery_row``'s columns
# (plus a claim's, for deliveries stored already claimed), times as offsets from the statement's now().
DELIVERY_COLUMNS: dict[str, TypeEngine[Any]] = {
    "id": Uuid(),
    "organization_id": Uuid(),
    "endpoint_id": Uuid(),
    "event_id": Uuid(),
    "event_type": String(),
    "status": String(),
    "is_test": Boolean(),
    "retry_of": Uuid(),
    "attempt_count": Integer(),
    "next_attempt_at": Interval(),  # offset from now(); NULL: held or final
    "claim_token": Uuid(),
    "last_error_message": Text(),
    "completed_at": Interval(),  # offset from now(); NULL: not final
}
_AT_TIMES = {"next_attempt_at", "completed_at"}
_NEW_ROWS = unnested("delivery", DELIVERY_COLUMNS)
INSERT_DELIVERIES = insert(Base.metadata.tables[Delivery.__tablename__]).from_select(
    list(DELIVERY_COLUMNS),
    select(*(func.now() + _NEW_ROWS.c[name] if name in _AT_TIMES else _NEW_ROWS.c[name] for name in DELIVERY_COLUMNS)),
)


def insert_deliveries(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    """New deliveries (``DELIVERY_COLUMNS``; a column a row lacks is NULL) in one statement."""
    if rows:
        session.connection().execute(INSERT_DELIVERIES, as_arrays(rows, DELIVERY_COLUMNS))
