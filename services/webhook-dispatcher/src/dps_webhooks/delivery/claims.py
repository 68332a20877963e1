"""The delivery work queue in the database: claiming due deliveries (recording.py records outcomes).

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
from uuid import UUID

from sqlalchemy import Interval, and_, bindparam, case, func, or_, select, update
from sqlalchemy.orm import Session

from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

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
