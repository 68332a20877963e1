"""Push requests (``/pricing-quotes/{id}/billing-pushes``): request one, list them, read one.

A request is checked at once against the api's snapshot of the quote (unknown: 404; not the key's
own quote and not an admin key: 403; not APPROVED: 409) and the organization's connection (none or
broken: 409). The snapshot read then is stored with the push, so the worker pushes exactly what was
approved, and the workers are woken at commit (``PUSHES_CHANNEL``). A request while a push of the
quote is queued or running answers that push (200) instead of starting another (a partial unique
index settles concurrent requests).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dps_common import request_id
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.db import Transactions
from dps_common.errors import Conflict, Forbidden, not_found
from dps_common.ids import new_id
from dps_common.keyset import resume_after
from dps_common.paging import PageRequest
from dps_common.work_queue import notify

from dps_billing.adapters.quote_snapshots import SnapshotReader
from dps_billing.db.models import BillingPush
from dps_billing.db.models.pushes import PUSHES_CHANNEL
from dps_billing.domain.push_views import PushView
from dps_billing.domain.quote_snapshot import QuoteSnapshot, QuoteStatus
from dps_billing.services.connection_lookup import broken_conflict, find_connection, not_connected_conflict
from dps_billing.services.push_reads import WHAT, objects_of, push_view, push_views

log = logging.getLogger("dps.billing.pushes")
ACTIVE = ("queued", "running")


def check_owner(principal: Principal, snapshot: QuoteSnapshot) -> None:
    if snapshot.owner_user_id != principal.user_id and not principal.has(Scope.QUOTES_ANY):
        raise Forbidden(
            f"Only the quote's owner, or a key with the '{Scope.QUOTES_ANY}' scope (admin), may push it to the "
            "billing platform.",
            code="not_quote_owner",
        )


def _active_push(session: Session, organization_id: UUID, quote_id: UUID) -> BillingPush | None:
    return session.scalar(select(BillingPush).where(
        BillingPush.organization_id == organization_id,
        BillingPush.quote_id == quote_id,
        BillingPush.status.in_(ACTIVE),
    ))


class PushService:
    def __init__(self, tx: Transactions, snapshots: SnapshotReader, now: Callable[[], datetime]):
        self._tx = tx
        self._snapshots = snapshots
        self._now = now

    def request_push(self, principal: Principal, quote_id: UUID) -> tuple[PushView, bool]:
        """The push, and whether it was created now (False: one was already queued or running)."""
        organization_id = principal.organization_id
        snapshot = self._snapshots.read(organization_id, quote_id)
        check_owner(principal, snapshot)
        if snapshot.status is not QuoteStatus.APPROVED:
            raise Conflict(
                f"Only an approved quote is pushed to the billing platform; this one is {snapshot.status.value}.",
                code="quote_not_approved",
            )
        now = self._now()
        with self._tx() as session:
            connection = find_connection(session, organization_id)
            if connection is None:
                raise not_connected_conflict()
            if connection.status == "broken":
                raise broken_conflict(connection.broken_reason)
            existing = _active_push(session, organization_id, quote_id)
            if existing is not None:
                return self._view(session, existing), False
            push = BillingPush(
                id=new_id(), organization_id=organization_id, quote_id=quote_id, requested_by=principal.user_id,
                status="queued", snapshot=snapshot.to_json(), warnings=[], created_at=now, updated_at=now,
                request_id=request_id.current(),  # the worker binds it while it runs the push
            )
            try:
                with session.begin_nested():
                    session.add(push)
                notify(session, PUSHES_CHANNEL)  # a worker claims it at commit, not at its next poll
            except IntegrityError:  # another request started a push of this quote meanwhile
                existing = _active_push(session, organization_id, quote_id)
                if existing is None:
                    raise
                return self._view(session, existing), False
            view = push_view(push, [])
        log.info("billing push queued", extra={"organizationId": str(organization_id), "pushId": str(view.id)})
        return view, True

    def list_pushes(self, principal: Principal, quote_id: UUID, page: PageRequest) -> list[PushView]:
        """Newest first (UUIDv7 ids descending). An unknown quote, or another organization's, is 404
        as ``GET /pricing-quotes/{id}`` answers it; pushes on record prove the quote, so only an empty
        first page asks the api."""
        stmt = select(BillingPush).where(
            BillingPush.organization_id == principal.organization_id, BillingPush.quote_id == quote_id
        )
        after = resume_after(page, [UUID])
        if after is not None:
            stmt = stmt.where(BillingPush.id < after[0])
        stmt = stmt.order_by(BillingPush.id.desc()).limit(page.limit + 1)
        with self._tx.read() as session:
            pushes = list(session.scalars(stmt))
            views = push_views(session, pushes)
        if not pushes and after is None:
            self._snapshots.read(principal.organization_id, quote_id)  # NotFound unless the quote is the org's
        return views

    def recent_pushes(self, principal: Principal, page: PageRequest) -> list[PushView]:
        """The organization's pushes, newest first (UUIDv7 ids descending)."""
        stmt = select(BillingPush).where(BillingPush.organization_id == principal.organization_id)
        after = resume_after(page, [UUID])
        if after is not None:
            stmt = stmt.where(BillingPush.id < after[0])
        stmt = stmt.order_by(BillingPush.id.desc()).limit(page.limit + 1)
        with self._tx.read() as session:
            return push_views(session, list(session.scalars(stmt)))

    def get_push(self, principal: Principal, quote_id: UUID, push_id: UUID) -> PushView:
        with self._tx.read() as session:
            push = session.scalar(select(BillingPush).where(
                BillingPush.id == push_id,
                BillingPush.organization_id == principal.organization_id,
                BillingPush.quote_id == quote_id,
            ))
            if push is None:
                raise not_found(WHAT)
            return self._view(session, push)

    @staticmethod
    def _view(session: Session, push: BillingPush) -> PushView:
        return push_view(push, objects_of(session, [push.id]).get(push.id, []))
