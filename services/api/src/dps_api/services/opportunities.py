"""Opportunities: create, read, list, partial update, and the closed-won action for the CRM push."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.db import Transactions
from dps_common.errors import (
    Conflict,
    Forbidden,
    invalid_field,
)
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.identity import User
from dps_api.db.models.opportunities import Opportunity
from dps_api.domain.commands import sent
from dps_api.domain.opportunity_commands import NewOpportunity, OpportunityChanges, check_amount, unsigned_zero
from dps_api.domain.opportunity_views import OpportunityView
from dps_api.domain.vocabulary import OpportunityStage
from dps_api.services.opportunity_lookup import find_opportunity
from dps_api.services.outbox import Outbox


@dataclass(frozen=True)
class OpportunityFilters:
    stage: OpportunityStage | None = None
    owner_user_id: UUID | None = None
    crm_id: str | None = None


def _view(opp: Opportunity) -> OpportunityView:
    return OpportunityView(
        id=opp.id,
        crm_id=opp.crm_id,
        name=opp.name,
        account_name=opp.account_name,
        owner_user_id=opp.owner_user_id,
        stage=OpportunityStage(opp.stage),
        amount=opp.amount,
        currency=opp.currency,
        close_date=opp.close_date,
        closed_won_at=opp.closed_won_at,
        created_at=opp.created_at,
        updated_at=opp.updated_at,
    )


def _check_owner(session: Session, organization_id: UUID, user_id: UUID) -> None:
    found = session.scalar(select(User.id).where(User.id == user_id, User.organization_id == organization_id))
    if found is None:
        raise invalid_field("ownerUserId", "must be a user of the organization")


def _check_crm_id_free(session: Session, organization_id: UUID, crm_id: str) -> None:
    taken = session.scalar(
        select(Opportunity.id).where(Opportunity.organization_id == organization_id, Opportunity.crm_id == crm_id)
    )
    if taken is not None:
        raise Conflict(f"An opportunity with crmId {crm_id!r} already exists.", code="crm_id_taken")


def _use_closed_won_action() -> Conflict:
    return Conflict(
        "stage CLOSED_WON is set only by POST /opportunities/{id}/closed-won.", code="use_closed_won_action"
    )


class OpportunityService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def list(self, principal: Principal, filters: OpportunityFilters, page: PageRequest) -> list[OpportunityView]:
        stmt = select(Opportunity).where(Opportunity.organization_id == principal.organization_id)
        if filters.stage is not None:
            stmt = stmt.where(Opportunity.stage == filters.stage.value)
        if filters.owner_user_id is not None:
            stmt = stmt.where(Opportunity.owner_user_id == filters.owner_user_id)
        if filters.crm_id is not None:
            stmt = stmt.where(Opportunity.crm_id == filters.crm_id)
        with self._tx.read() as session:
            rows = session.scalars(keyset(stmt, [Opportunity.id], page, convert=[UUID]))
            return [_view(row) for row in rows]

    def get(self, principal: Principal, opportunity_id: UUID) -> OpportunityView:
        with self._tx.read() as session:
            return _view(find_opportunity(session, principal.organization_id, opportunity_id))

    def create(self, principal: Principal, command: NewOpportunity) -> OpportunityView:
        if command.stage == OpportunityStage.CLOSED_WON:
            raise _use_closed_won_action()
        amount = unsigned_zero(command.amount)
        check_amount(amount, command.currency)
        org_id = principal.organization_id
        owner = command.owner_user_id or principal.user_id
        with self._tx() as session:
            _check_owner(session, org_id, owner)
            if command.crm_id is not None:
                _check_crm_id_free(session, org_id, command.crm_id)
            now = self._now()
            opp = Opportunity(
                organization_id=org_id,
                crm_id=command.crm_id,
                name=command.name,
                account_name=command.account_name,
                owner_user_id=owner,
                stage=command.stage.value,
                amount=amount,
                currency=command.currency,
                close_date=command.close_date,
                created_at=now,
                updated_at=now,
            )
            session.add(opp)
            session.flush()
            view = _view(opp)
            self._outbox.record(session, view, org_id, now, "opportunity.created")
            return view

    def update(self, principal: Principal, opportunity_id: UUID, command: OpportunityChanges) -> OpportunityView:
        org_id = principal.organization_id
        fields = sent(command)
        if "amount" in fields:
            fields["amount"] = unsigned_zero(fields["amount"])
        if isinstance(fields.get("stage"), OpportunityStage):
            fields["stage"] = fields["stage"].value
        with self._tx() as session:
            opp = find_opportunity(session, org_id, opportunity_id, lock=True)
            changes = {column: value for column, value in fields.items() if getattr(opp, column) != value}
            if not changes:
                return _view(opp)  # nothing changed: no write, no event
            if "amount" in changes or "currency" in changes:
                check_amount(changes.get("amount", opp.amount), changes.get("currency", opp.currency))
            if "stage" in changes:
                changes.update(self._stage_change(principal, opp, changes["stage"]))
            if "owner_user_id" in changes:
                _check_owner(session, org_id, changes["owner_user_id"])
            if changes.get("crm_id") is not None:
                _check_crm_id_free(session, org_id, changes["crm_id"])
            now = self._now()
            for column, value in changes.items():
                setattr(opp, column, value)
            opp.updated_at = now
            session.flush()
            view = _view(opp)
            self._outbox.record(session, view, org_id, now, "opportunity.updated")
            return view

    @staticmethod
    def _stage_change(principal: Principal, opp: Opportunity, stage: str) -> dict[str, Any]:
        """Extra column changes a stage change implies; raises when the move is not allowed."""
        if stage == OpportunityStage.CLOSED_WON:
            raise _use_closed_won_action()
        if opp.stage == OpportunityStage.CLOSED_WON:
            # closed-won was pushed to the CRM: only an admin (who may push it) may reopen it
            if not principal.has(Scope.CRM_PUSH):
                raise Forbidden(
                    "Only an admin key may move a CLOSED_WON opportunity to another stage.",
                    code="closed_won_reopen_needs_admin",
                )
            return {"closed_won_at": None}
        return {}

    def mark_closed_won(self, principal: Principal, opportunity_id: UUID) -> OpportunityView:
        org_id = principal.organization_id
        with self._tx() as session:
            opp = find_opportunity(session, org_id, opportunity_id, lock=True)
            if opp.stage == OpportunityStage.CLOSED_WON:
                raise Conflict("The opportunity is already CLOSED_WON.", code="already_closed_won")
            now = self._now()
            opp.stage = OpportunityStage.CLOSED_WON.value
            opp.closed_won_at = now
            opp.updated_at = now
            session.flush()
            view = _view(opp)
            self._outbox.record(session, view, org_id, now, "opportunity.closed_won")
            return view
