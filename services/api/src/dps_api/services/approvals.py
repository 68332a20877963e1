"""Approval requests: submit a quote (rules evaluated, chain snapshotted), recall, approve, reject, read.

Locking: every use case that changes a request locks the quote row first (``lock_quote_facts``), then
the request row, both FOR UPDATE and always in that order, so a recall and an approval of the same
quote serialise and concurrent approvals can never double-count or lose a vote.

Events: ``approval.requested`` on submit; per approval ``approval.vote_recorded`` (the step still
waits), ``approval.step_approved`` (a step completed) and then ``approval.approved`` after the last
step; ``approval.rejected``; ``approval.recalled``. The quote's own events (``quote.submitted``,
``quote.approved``, ``quote.rejected``, ``quote.recalled``) come from ``change_quote_status``. A
submission that fires no rule is approved at once: ``approval.requested``, ``approval.approved``
and ``quote.approved``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.db import Transactions
from dps_common.errors import Conflict, Forbidden, not_found
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.approvals import (
    ApprovalGroup,
    ApprovalRequest,
    ApprovalRule,
    ApprovalRuleGroup,
)
from dps_api.domain import approval_flow as flow_rules
from dps_api.domain.approval_flow import (
    ApproverGroup,
    FiredRule,
    RequestStatus,
    RuleGroupRef,
)
from dps_api.domain.approval_requests import ApprovalRequestView
from dps_api.domain.approval_rules import RuleSpec, fired_rules
from dps_api.domain.vocabulary import QuoteStatus
from dps_api.services.approval_config import members_of, rule_condition
from dps_api.services.approval_flow_rows import apply_flow, flow_of, request_view
from dps_api.services.outbox import Outbox
from dps_api.services.quote_approval import (
    QuoteFacts,
    change_quote_status,
    lock_quote_facts,
)


@dataclass(frozen=True)
class ApprovalFilters:
    status: RequestStatus | None = None
    quote_id: UUID | None = None




def _check_quote_owner(principal: Principal, facts: QuoteFacts) -> None:
    if facts.owner_user_id != principal.user_id and not principal.has(Scope.QUOTES_ANY):
        raise Forbidden(
            f"Only the quote's owner, or a key with the '{Scope.QUOTES_ANY}' scope (admin), may submit or recall "
            "its approval.",
            code="not_quote_owner",
        )


def _chain(session: Session, organization_id: UUID, facts: QuoteFacts) -> tuple[flow_rules.Step, ...]:
    """The organization's active rules evaluated against the quote, built into the approval chain."""
    stmt = (
        select(ApprovalRule, ApprovalRuleGroup)
        .outerjoin(ApprovalRuleGroup, ApprovalRuleGroup.id == ApprovalRule.rule_group_id)
        .where(ApprovalRule.organization_id == organization_id, ApprovalRule.active.is_(True))
        .order_by(ApprovalRule.id)
    )
    specs, steps_of = [], {}
    for rule, step in session.execute(stmt):
        specs.append(RuleSpec(rule.id, rule.name, rule_condition(rule), rule.approval_group_id, rule.rule_group_id))
        steps_of[rule.id] = RuleGroupRef(step.id, step.name, step.position) if step is not None else None
    fired = [FiredRule(r.id, r.name, r.approval_group_id, steps_of[r.id]) for r in fired_rules(specs, facts.terms)]
    group_ids = sorted({r.approval_group_id for r in fired})
    groups = list(session.scalars(select(ApprovalGroup).where(ApprovalGroup.id.in_(group_ids)))) if group_ids else []
    members = members_of(session, group_ids)
    approvers = {
        g.id: ApproverGroup(g.id, g.name, frozenset(members[g.id]), g.required_approvals) for g in groups
    }
    return flow_rules.build_steps(fired, approvers)


def _find_request(session: Session, organization_id: UUID, approval_id: UUID, *, lock: bool = False) -> ApprovalRequest:
    stmt = select(ApprovalRequest).where(
        ApprovalRequest.id == approval_id, ApprovalRequest.organization_id == organization_id
    )
    if lock:
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
    request = session.scalar(stmt)
    if request is None:
        raise not_found("Approval request")
    return request


class ApprovalService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def list(
        self, principal: Principal, filters: ApprovalFilters, page: PageRequest, offset: int = 0
    ) -> list[ApprovalRequestView]:
        """Newest first. ``offset`` serves the deprecated offset/count paging (never with a cursor)."""
        stmt = select(ApprovalRequest).where(ApprovalRequest.organization_id == principal.organization_id)
        if filters.status is not None:
            stmt = stmt.where(ApprovalRequest.status == filters.status)
        if filters.quote_id is not None:
            stmt = stmt.where(ApprovalRequest.quote_id == filters.quote_id)
        stmt = keyset(stmt, [ApprovalRequest.id], page, descending=True, convert=[UUID])
        with self._tx.read() as session:
            return [request_view(r) for r in session.scalars(stmt.offset(offset) if offset else stmt)]

    def get(self, principal: Principal, approval_id: UUID) -> ApprovalRequestView:
        with self._tx.read() as session:
            return request_view(_find_request(session, principal.organization_id, approval_id))

    def submit(self, principal: Principal, quote_id: UUID) -> ApprovalRequestView:
        org_id = principal.organization_id
        with self._tx() as session:
            facts = lock_quote_facts(session, org_id, quote_id)
            _check_quote_owner(principal, facts)
            if facts.status != QuoteStatus.DRAFT:
                raise Conflict(
                    f"Only a DRAFT quote can be submitted; this one is {facts.status}.", code="quote_not_draft"
                )
            if facts.line_count < 1:
                raise Conflict("A quote needs at least one line to be submitted.", code="quote_has_no_lines")
            now = self._now()
            flow = flow_rules.start(_chain(session, org_id, facts), facts.owner_user_id, now)
            request = ApprovalRequest(
                organization_id=org_id,
                quote_id=facts.quote_id,
                quote_owner_user_id=facts.owner_user_id,
                requested_by_user_id=principal.user_id,
                created_at=now,
            )
            apply_flow(request, flow, now)
            session.add(request)
            if flow.status is RequestStatus.APPROVED:
                view = self._recorded(session, request, ("approval.requested", "approval.approved"), now)
                change_quote_status(self._outbox, session, org_id, facts.quote_id, QuoteStatus.APPROVED, now, "quote.approved")
            else:
                view = self._recorded(session, request, ("approval.requested",), now)
                change_quote_status(
                    self._outbox, session, org_id, facts.quote_id, QuoteStatus.PENDING_APPROVAL, now, "quote.submitted"
                )
            return view

    def recall(self, principal: Principal, quote_id: UUID) -> ApprovalRequestView:
        org_id = principal.organization_id
        with self._tx() as session:
            facts = lock_quote_facts(session, org_id, quote_id)
            _check_quote_owner(principal, facts)
            pending = select(ApprovalRequest.id).where(
                ApprovalRequest.organization_id == org_id,
                ApprovalRequest.quote_id == quote_id,
                ApprovalRequest.status == RequestStatus.PENDING,
            )
            approval_id = session.scalar(pending)
            if approval_id is None:
                raise Conflict("The quote has no pending approval request to recall.", code="no_pending_approval")
            request = _find_request(session, org_id, approval_id, lock=True)
            now = self._now()
            apply_flow(request, flow_rules.recall(flow_of(request), principal.user_id, now), now)
            view = self._recorded(session, request, ("approval.recalled",), now)
            change_quote_status(self._outbox, session, org_id, quote_id, QuoteStatus.DRAFT, now, "quote.recalled")
            return view

    def approve(self, principal: Principal, approval_id: UUID, comment: str | None) -> ApprovalRequestView:
        org_id = principal.organization_id
        with self._tx() as session:
            request = self._lock(session, org_id, approval_id)
            now = self._now()
            outcome = flow_rules.approve(flow_of(request), principal.user_id, now, comment)
            apply_flow(request, outcome.flow, now)
            if outcome.completed_step is None:
                return self._recorded(session, request, ("approval.vote_recorded",), now)
            if outcome.flow.status is not RequestStatus.APPROVED:
                return self._recorded(session, request, ("approval.step_approved",), now)
            view = self._recorded(session, request, ("approval.step_approved", "approval.approved"), now)
            change_quote_status(self._outbox, session, org_id, request.quote_id, QuoteStatus.APPROVED, now, "quote.approved")
            return view

    def reject(self, principal: Principal, approval_id: UUID, comment: str | None) -> ApprovalRequestView:
        org_id = principal.organization_id
        with self._tx() as session:
            request = self._lock(session, org_id, approval_id)
            now = self._now()
            apply_flow(request, flow_rules.reject(flow_of(request), principal.user_id, now, comment), now)
            view = self._recorded(session, request, ("approval.rejected",), now)
            change_quote_status(self._outbox, session, org_id, request.quote_id, QuoteStatus.REJECTED, now, "quote.rejected")
            return view

    def _recorded(
        self, session: Session, request: ApprovalRequest, event_types: tuple[str, ...], now: datetime
    ) -> ApprovalRequestView:
        """The request as it now stands, with ``event_types`` written to the outbox about it."""
        session.flush()
        view = request_view(request)
        self._outbox.record(session, view, request.organization_id, now, *event_types)
        return view

    @staticmethod
    def _lock(session: Session, organization_id: UUID, approval_id: UUID) -> ApprovalRequest:
        """The request, locked after its quote (the lock order every use case here follows)."""
        quote_id = session.scalar(
            select(ApprovalRequest.quote_id).where(
                ApprovalRequest.id == approval_id, ApprovalRequest.organization_id == organization_id
            )
        )
        if quote_id is None:
            raise not_found("Approval request")
        lock_quote_facts(session, organization_id, quote_id)
        return _find_request(session, organization_id, approval_id, lock=True)

