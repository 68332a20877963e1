"""A push run's progress and outcome, written as it happens: each in its own short transaction, so
what the platform created is on record before the next call (a worker killed at any point leaves
every returned id stored).

- ``intend``: before a create, the row of the object with its idempotency key and ``sent_at``.
- ``created``: the platform's id, as soon as it is returned, with the push's progress count.
- ``succeed``, ``fail``: the push ended (only while the caller still holds the lease, ``PUSHES.holding``),
  with its ``billing.quote_pushed`` / ``billing.push_failed`` event (the push's view, rendered by the
  outbox adapter) in the same transaction;
  ``retry_later``: queued again for later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import exists, select, update
from sqlalchemy.orm import Session

from dps_common.db import Transactions

from dps_billing.db.models import BillingPush, PushObject
from dps_billing.db.push_claims import PUSHES
from dps_billing.services.ports import Outbox
from dps_billing.services.push_reads import push_view

QUOTE_PUSHED = "billing.quote_pushed"
PUSH_FAILED = "billing.push_failed"
_PROGRESS = {"product": "products_created", "price": "prices_created"}


@dataclass(frozen=True)
class Failure:
    code: str
    message: str
    param: str | None = None


class PushProgress:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def objects(self, push_id: UUID) -> dict[tuple[str, str], PushObject]:
        with self._tx.read() as session:
            rows = session.scalars(select(PushObject).where(PushObject.push_id == push_id))
            return {(row.line_id, row.kind): row for row in rows}

    def is_known(self, platform_id: str) -> bool:
        """Whether any push recorded this platform id already."""
        with self._tx.read() as session:
            return bool(session.scalar(select(exists().where(PushObject.platform_id == platform_id))))

    def planned(self, push_id: UUID, lines_total: int, warnings: list[dict[str, Any]]) -> None:
        with self._tx() as session:
            session.execute(
                update(BillingPush)
                .where(BillingPush.id == push_id)
                .values(lines_total=lines_total, warnings=warnings, updated_at=self._now())
            )

    def intend(self, push_id: UUID, line_id: str, kind: str, position: int, generation: int, key: str) -> PushObject:
        """Insert or update the object's intent (a new generation replaces an expired one)."""
        now = self._now()
        with self._tx() as session:
            row = session.scalar(
                select(PushObject)
                .where(PushObject.push_id == push_id, PushObject.line_id == line_id, PushObject.kind == kind)
                .with_for_update()
            )
            if row is None:
                row = PushObject(push_id=push_id, line_id=line_id, kind=kind, position=position)
                session.add(row)
            row.generation = generation
            row.idempotency_key = key
            row.sent_at = now
            session.flush()
            return row

    def created(self, row: PushObject, platform_id: str) -> None:
        """The id, and the progress count it adds (counted once: only when no id was stored yet)."""
        with self._tx() as session:
            stored = session.execute(
                update(PushObject)
                .where(PushObject.id == row.id, PushObject.platform_id.is_(None))
                .values(platform_id=platform_id)
                .returning(PushObject.id)
            ).first()
            if stored is None:
                return
            values: dict[str, Any] = {"updated_at": self._now()}
            if row.kind == "quote":
                values |= {"quote_created": True, "billing_quote_id": platform_id}
            else:
                column = _PROGRESS[row.kind]
                values[column] = getattr(BillingPush, column) + 1
            session.execute(update(BillingPush).where(BillingPush.id == row.push_id).values(**values))
        row.platform_id = platform_id

    def succeed(self, push_id: UUID, token: UUID, review_url: str) -> bool:
        return self._finish(push_id, token, "succeeded", {"review_url": review_url}, QUOTE_PUSHED)

    def fail(self, push_id: UUID, token: UUID, failure: Failure) -> bool:
        values = {"error_code": failure.code, "error_message": failure.message, "error_param": failure.param}
        return self._finish(push_id, token, "failed", values, PUSH_FAILED)

    def retry_later(self, push_id: UUID, token: UUID, delay: timedelta, failure: Failure) -> bool:
        """Queued again, not claimable before ``delay`` has passed; the last error is shown meanwhile."""
        with self._tx() as session:
            push = _held(session, push_id, token)
            if push is None:
                return False
            push.status = "queued"
            push.claim_token = None
            push.lease_until = self._now() + delay
            push.error_code, push.error_message, push.error_param = failure.code, failure.message, failure.param
            push.updated_at = self._now()
        return True

    def _finish(self, push_id: UUID, token: UUID, status: str, values: dict[str, Any], event: str) -> bool:
        now = self._now()
        with self._tx() as session:
            push = _held(session, push_id, token)
            if push is None:
                return False  # the lease was lost: the worker that holds it now finishes the push
            push.status = status
            push.lease_until = None
            push.claim_token = None
            push.finished_at = now
            push.updated_at = now
            if status == "succeeded":
                push.error_code = push.error_message = push.error_param = None
            for name, value in values.items():
                setattr(push, name, value)
            objects = session.scalars(select(PushObject).where(PushObject.push_id == push_id)).all()
            self._outbox.record(session, event, push.organization_id, push_view(push, objects), now)
        return True


def _held(session: Session, push_id: UUID, token: UUID) -> BillingPush | None:
    return session.scalar(select(BillingPush).where(PUSHES.holding(push_id, token)).with_for_update())
