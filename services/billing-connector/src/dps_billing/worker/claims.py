"""The push work queue in the database: claiming, renewing and releasing pushes under a lease.

A claim is one statement: it locks claimable rows with ``FOR UPDATE SKIP LOCKED`` (so workers never
take the same push), marks them ``running`` one lease ahead and stamps them with the claim's token.
A push is claimable while ``queued`` (once its ``lease_until``, a retry's not-before time, has passed),
and again once a running push's lease has ended (its worker died): the
next worker resumes it from the objects already stored. The holder renews its lease while working;
only the current token may finish the push. ``planned_at`` is set at the first claim and kept, so a
resumed push plans exactly what the first attempt planned (and sends the same parameters under the
same idempotency keys). All times come from the database clock.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Interval, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from dps_common.wakeup import notify

from dps_billing.db.models import BillingPush
from dps_billing.db.models.pushes import PUSHES_CHANNEL

P = BillingPush


@dataclass(frozen=True)
class ClaimedPush:
    push_id: UUID
    organization_id: UUID
    quote_id: UUID
    snapshot: dict[str, Any]
    planned_at: datetime
    claims: int
    token: UUID
    request_id: str | None = None  # of the request that queued the push: bound while it runs


_CLAIM = (
    update(P)
    .where(
        P.id.in_(
            select(P.id)
            .where(
                or_(
                    (P.status == "queued") & (or_(P.lease_until.is_(None), P.lease_until <= func.now())),
                    (P.status == "running") & (P.lease_until < func.now()),
                )
            )
            .order_by(P.id)
            .limit(bindparam("limit"))
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
    )
    .values(
        status="running",
        lease_until=func.now() + bindparam("lease", type_=Interval()),
        claim_token=bindparam("token"),
        claims=P.claims + 1,
        planned_at=func.coalesce(P.planned_at, func.now()),
        updated_at=func.now(),
    )
    .returning(P.id, P.organization_id, P.quote_id, P.snapshot, P.planned_at, P.claims, P.request_id)
)


def claim_pushes(session: Session, limit: int, lease_seconds: float) -> list[ClaimedPush]:
    token = uuid.uuid4()
    rows = session.connection().execute(
        _CLAIM, {"limit": limit, "lease": timedelta(seconds=lease_seconds), "token": token}
    ).all()
    return [
        ClaimedPush(
            row.id, row.organization_id, row.quote_id, row.snapshot, row.planned_at, row.claims, token, row.request_id
        )
        for row in rows
    ]


def renew_lease(session: Session, push_id: UUID, token: UUID, lease_seconds: float) -> bool:
    """False when the lease was lost (another worker took the push over): stop working on it."""
    result = session.connection().execute(
        update(P)
        .where(P.id == push_id, P.claim_token == token, P.status == "running")
        .values(lease_until=func.now() + timedelta(seconds=lease_seconds))
        .returning(P.id)
    )
    return result.first() is not None


def release(session: Session, push_id: UUID, token: UUID) -> None:
    """Give a push back at once (the worker is stopping): queued again for any worker, woken now."""
    session.connection().execute(
        update(P)
        .where(P.id == push_id, P.claim_token == token, P.status == "running")
        .values(status="queued", lease_until=None, claim_token=None, updated_at=func.now())
    )
    notify(session, PUSHES_CHANNEL)
