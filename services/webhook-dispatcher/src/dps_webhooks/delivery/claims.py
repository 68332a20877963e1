"""The delivery work queue in the database: claiming due deliveries and recording what happened.

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

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from sqlalchemy import Boolean, Interval, and_, bindparam, case, func, insert, or_, select, update
from sqlalchemy.orm import Session

from dps_common.ids import new_id

from dps_webhooks.db.models import DeliveryAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from dps_webhooks.domain.attempt_outcome import (
    AttemptResult,
    DeliveryStatus,
    EndpointEffect,
    Outcome,
    disabled_reason,
)
from dps_webhooks.services.intake import hold_pending, notify_due

log = logging.getLogger("dps.webhooks.claims")

D, E, Ev = WebhookDelivery, WebhookEndpoint, WebhookEvent


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


class LeaseLost(Exception):
    """The delivery was taken up by another worker (or deleted) before this outcome was recorded."""


def _sendable():
    """Deliveries are sent to ACTIVE endpoints; test deliveries also to PAUSED ones."""
    return or_(E.status == "ACTIVE", and_(D.is_test, E.status == "PAUSED"))


# Built once: statement construction costs more than the query on this hot path.
_CLAIM = (
    update(D)
    .where(
        D.id.in_(
            select(D.id)
            .join(E, E.id == D.endpoint_id)
            .where(D.next_attempt_at <= func.now(), _sendable())
            .order_by(D.next_attempt_at)
            .limit(bindparam("limit"))
            .with_for_update(of=D, skip_locked=True)
            .scalar_subquery()
        ),
        E.id == D.endpoint_id,
        Ev.id == D.event_id,
    )
    .values(
        next_attempt_at=func.now() + bindparam("lease", type_=Interval()),
        claim_token=bindparam("token"),
        attempt_count=D.attempt_count + case((D.claim_token.is_(None), 1), else_=0),
    )
    .returning(D.id, D.endpoint_id, D.event_id, D.attempt_count, D.is_test, E.url, E.secret_sealed, Ev.body)
)


def claim_due(session: Session, limit: int, lease_seconds: float) -> list[Claimed]:
    token = uuid.uuid4()
    parameters = {"limit": limit, "lease": timedelta(seconds=lease_seconds), "token": token}
    rows = session.connection().execute(_CLAIM, parameters).all()
    return [Claimed(*row, token=token) for row in rows]


def record_outcome(
    session: Session,
    claimed: Claimed,
    result: AttemptResult,
    outcome: Outcome,
    *,
    disable_after: int,
    wake_within_seconds: float = 0.0,
) -> None:
    """The attempt row, the delivery's state and the endpoint's failure count, in one transaction.

    Raises ``LeaseLost`` (roll back) when the claim is no longer this worker's.

    The delivery moves from PENDING to FAILED when its first failed attempt is recorded here, and
    stays FAILED (also while a retry is in flight) until SUCCESS or EXHAUSTED. ``lastErrorMessage``
    describes the last attempt: NULL after a success.
    """
    # The endpoint row first: the same lock order as pausing or disabling (endpoint, then its
    # deliveries), so the two never deadlock, and a pause that commits first is seen here.
    endpoint_status = _apply_endpoint_effect(session, claimed.endpoint_id, outcome.endpoint, disable_after)
    retry_in = None
    if outcome.status is DeliveryStatus.FAILED and _sendable_to(endpoint_status, claimed.is_test):
        assert outcome.retry_in_seconds is not None
        retry_in = timedelta(seconds=outcome.retry_in_seconds)
        if outcome.retry_in_seconds <= wake_within_seconds:
            notify_due(session)  # sooner than the workers would poll
    # otherwise final, or held: the endpoint was paused or disabled meanwhile (resuming releases it)
    connection = session.connection()
    parameters = {
        "delivery": claimed.delivery_id,
        "token": claimed.token,
        "attempt_number": claimed.attempt,
        "attempt_id": new_id(),
        "new_status": outcome.status.value,
        "retry_in": retry_in,
        "final": outcome.status in (DeliveryStatus.SUCCESS, DeliveryStatus.EXHAUSTED),
        "answered": result.status,
        "excerpt": result.excerpt,
        "error": result.error_message,
        "took_ms": result.duration_ms,
        "duration": timedelta(milliseconds=result.duration_ms),
    }
    if connection.execute(_RECORD, parameters).scalar() is None:
        raise LeaseLost(str(claimed.delivery_id))
    connection.execute(_ADD_ATTEMPT, parameters)


_ATTEMPTED_AT = func.now() - bindparam("duration", type_=Interval())  # by the database clock
_RECORD = (
    update(D)
    .where(D.id == bindparam("delivery"), D.claim_token == bindparam("token"))
    .values(
        status=bindparam("new_status"),
        next_attempt_at=func.now() + bindparam("retry_in", type_=Interval()),  # NULL: none scheduled
        claim_token=None,
        last_response_status=bindparam("answered"),
        last_response_excerpt=bindparam("excerpt"),
        last_error_message=bindparam("error"),
        last_duration_ms=bindparam("took_ms"),
        last_attempted_at=_ATTEMPTED_AT,
        completed_at=case((bindparam("final", type_=Boolean()), func.now()), else_=None),
    )
    .returning(D.id)
)
_ADD_ATTEMPT = insert(DeliveryAttempt).values(
    id=bindparam("attempt_id"),
    delivery_id=bindparam("delivery"),
    attempt=bindparam("attempt_number"),
    attempted_at=_ATTEMPTED_AT,
    response_status=bindparam("answered"),
    response_excerpt=bindparam("excerpt"),
    error_message=bindparam("error"),
    duration_ms=bindparam("took_ms"),
)


def _sendable_to(endpoint_status: str | None, is_test: bool) -> bool:
    return endpoint_status == "ACTIVE" or (is_test and endpoint_status == "PAUSED")


def _apply_endpoint_effect(
    session: Session, endpoint_id: UUID, effect: EndpointEffect, disable_after: int
) -> str | None:
    """Reset or count the endpoint's consecutive failures; its status (None after a success)."""
    if effect is EndpointEffect.RESET_FAILURES:
        # Written only when it changes: successes to a healthy endpoint take no row lock.
        session.execute(
            update(E).where(E.id == endpoint_id, E.consecutive_failures != 0).values(consecutive_failures=0)
        )
        return None
    if effect is EndpointEffect.NONE:
        status = session.execute(select(E.status).where(E.id == endpoint_id).with_for_update(read=True)).scalar()
        if status is None:
            raise LeaseLost(f"endpoint {endpoint_id} is gone")
        return status
    counted = session.execute(
        update(E)
        .where(E.id == endpoint_id)
        .values(consecutive_failures=E.consecutive_failures + 1)
        .returning(E.consecutive_failures, E.status)
    ).one_or_none()
    if counted is None:
        raise LeaseLost(f"endpoint {endpoint_id} is gone")
    failures, status = counted
    reason = disabled_reason(failures, disable_after)
    if reason is not None and status == "ACTIVE":
        session.execute(
            update(E)
            .where(E.id == endpoint_id)
            .values(status="DISABLED", disabled_reason=reason, updated_at=func.now())
        )
        hold_pending(session, endpoint_id, keep_tests=False)
        log.warning("endpoint disabled", extra={"endpointId": str(endpoint_id), "consecutiveFailures": failures})
        return "DISABLED"
    return status
