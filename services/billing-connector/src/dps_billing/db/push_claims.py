"""The push work queue in the database: claiming, renewing and releasing pushes under a lease.

The queue is a ``dps_common.work_queue.WorkQueue`` (claims with ``FOR UPDATE SKIP LOCKED`` under a
lease and a token per claim, ``NOTIFY`` on ``PUSHES_CHANNEL``). A push is claimable while ``queued``
(once its ``lease_until``, a retry's not-before time, has passed), and again once a running push's
lease has ended (its worker died): the next worker resumes it from the objects already stored. The
holder renews its lease while working; only the current token may finish the push (``holding``).
``planned_at`` is set at the first claim and kept, so a resumed push plans exactly what the first
attempt planned (and sends the same parameters under the same idempotency keys). All times come
from the database clock.
"""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import func, or_
from sqlalchemy.orm import Session

from dps_common.work_queue import WorkQueue

from dps_billing.db.models import BillingPush
from dps_billing.db.models.pushes import PUSHES_CHANNEL
from dps_billing.domain.claimed_push import ClaimedPush

P = BillingPush

PUSHES = WorkQueue(
    P,
    P.id,
    due=or_(
        (P.status == "queued") & (or_(P.lease_until.is_(None), P.lease_until <= func.now())),
        (P.status == "running") & (P.lease_until < func.now()),
    ),
    order_by=P.id,
    channel=PUSHES_CHANNEL,
    lease_until=P.lease_until,
    token=P.claim_token,
    held=P.status == "running",
)


_CLAIM = PUSHES.claim_statement(
    values={
        "status": "running",
        "claims": P.claims + 1,
        "planned_at": func.coalesce(P.planned_at, func.now()),
        "updated_at": func.now(),
    },
    returning=[P.id, P.organization_id, P.quote_id, P.snapshot, P.planned_at, P.claims, P.request_id],
)


def claim_pushes(session: Session, limit: int, lease_seconds: float) -> list[ClaimedPush]:
    token, rows = PUSHES.claim(session, _CLAIM, limit, lease_seconds)
    return [
        ClaimedPush(
            row.id, row.organization_id, row.quote_id, row.snapshot, row.planned_at, row.claims, token, row.request_id
        )
        for row in rows
    ]


def renew_lease(session: Session, push_id: UUID, token: UUID, lease_seconds: float) -> bool:
    """False when the lease was lost (another worker took the push over): stop working on it."""
    return PUSHES.renew(session, push_id, token, lease_seconds)


def release(session: Session, push_id: UUID, token: UUID) -> None:
    """Give a push back at once (the worker is stopping): queued again for any worker, woken now."""
    PUSHES.release(session, push_id, token, {"status": "queued", "updated_at": func.now()})
