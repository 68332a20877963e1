"""Opportunities: create, read, list, partial update, and the closed-won action for the CRM push."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
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
    not_found,
)
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.identity import User
from dps_api.db.models.opportunities import Opportunity
from dps_api.domain.money import (
    currency_exponent,
    format_money,
    is_supported_currency,
    round_money,
)
from dps_api.schemas.opportunities import (
    OpportunityCreate,
    OpportunityStage,
    OpportunityUpdate,
)
from dps_api.services.outbox import record_event

# request field -> column, for partial updates
_UPDATABLE = {
    "crmId": "crm_id",
    "name": "name",
    "accountName": "account_name",
    "ownerUserId": "owner_user_id",
    "stage": "stage",
    "amount": "amount",
    "currency": "currency",
    "closeDate": "close_date",
}


@dataclass(frozen=True)
class OpportunityFilters:
    stage: OpportunityStage | None = None
    owner_user_id: UUID | None = None
    crm_id: str | None = None


def check_amount(amount: Decimal | None, currency: str | None) -> None:
    """A currency must be ISO 4217 with minor units; an amount needs one and must fit its minor units."""
    if currency is not None and not is_supported_currency(currency):
        raise invalid_field("currency", "must be an ISO 4217 currency code with minor units")
    if amount is None:
        return
    if currency is None:
        raise invalid_field("currency", "is required when amount is set")
    if amount < 0:
        raise invalid_field("amount", "must not be negative")
    if round_money(amount, currency) != amount:
        raise invalid_field("amount", f"has more decimals than {currency} allows ({currency_exponent(currency)})")


def parse_amount(raw: str | None) -> Decimal | None:
    """A request's decimal string; "-0" becomes 0 so the response matches what is stored."""
    if raw is None:
        return None
    amount = Decimal(raw)
    return abs(amount) if amount.is_zero() else amount


def format_amount(amount: Decimal | None, currency: str | None) -> str | None:
    if amount is None or currency is None:
        return None
    return format_money(amount, currency)


def _utc(moment: datetime | None) -> datetime | None:
    return moment.astimezone(UTC) if moment is not None else None


def render_opportunity(opp: Opportunity) -> dict[str, Any]:
    """The API's rendering of an opportunity, also the snapshot its events carry."""
    return {
        "id": str(opp.id),
        "crmId": opp.crm_id,
        "name": opp.name,
        "accountName": opp.account_name,
        "ownerUserId": str(opp.owner_user_id),
        "stage": opp.stage,
        "amount": format_amount(opp.amount, opp.currency),
        "currency": opp.currency,
        "closeDate": opp.close_date,
        "closedWonAt": _utc(opp.closed_won_at),
        "createdAt": _utc(opp.created_at),
        "updatedAt": _utc(opp.updated_at),
    }


def find_opportunity(
    session: Session, organization_id: UUID, opportunity_id: UUID, *, lock: bool = False
) -> Opportunity:
    stmt = select(Opportunity).where(Opportunity.id == opportunity_id, Opportunity.organization_id == organization_id)
    opp = session.scalar(stmt.with_for_update() if lock else stmt)
    if opp is None:
        raise not_found("Opportunity")
    return opp


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
    def __init__(self, tx: Transactions, now: Callable[[], datetime]):
        self._tx = tx
        self._now = now

    def list(self, principal: Principal, filters: OpportunityFilters, page: PageRequest) -> list[dict[str, Any]]:
        stmt = select(Opportunity).where(Opportunity.organization_id == principal.organization_id)
        if filters.stage is not None:
            stmt = stmt.where(Opportunity.stage == filters.stage.value)
        if filters.owner_user_id is not None:
            stmt = stmt.where(Opportunity.owner_user_id == filters.owner_user_id)
        if filters.crm_id is not None:
            stmt = stmt.where(Opportunity.crm_id == filters.crm_id)
        with self._tx.read() as session:
            rows = session.scalars(keyset(stmt, [Opportunity.id], page, convert=[UUID]))
            return [render_opportunity(row) for row in rows]

    def get(self, principal: Principal, opportunity_id: UUID) -> dict[str, Any]:
        with self._tx.read() as session:
            return render_opportunity(find_opportunity(session, principal.organization_id, opportunity_id))

    def create(self, principal: Principal, body: OpportunityCreate) -> dict[str, Any]:
        if body.stage == OpportunityStage.CLOSED_WON:
            raise _use_closed_won_action()
        amount = parse_amount(body.amount)
        check_amount(amount, body.currency)
        org_id = principal.organization_id
        owner = body.ownerUserId or principal.user_id
        with self._tx() as session:
            _check_owner(session, org_id, owner)
            if body.crmId is not None:
                _check_crm_id_free(session, org_id, body.crmId)
            now = self._now()
            opp = Opportunity(
                organization_id=org_id,
                crm_id=body.crmId,
                name=body.name,
                account_name=body.accountName,
                owner_user_id=owner,
                stage=body.stage.value,
                amount=amount,
                currency=body.currency,
                close_date=body.closeDate,
                created_at=now,
                updated_at=now,
            )
            session.add(opp)
            session.flush()
            view = render_opportunity(opp)
            record_event(session, "opportunity.created", org_id, view, now)
            return view

    def update(self, principal: Principal, opportunity_id: UUID, body: OpportunityUpdate) -> dict[str, Any]:
        org_id = principal.organization_id
        sent = {
            column: getattr(body, field) for field, column in _UPDATABLE.items() if field in body.model_fields_set
        }
        if "amount" in sent:
            sent["amount"] = parse_amount(sent["amount"])
        if sent.get("stage") is not None:
            sent["stage"] = sent["stage"].value
        with self._tx() as session:
            opp = find_opportunity(session, org_id, opportunity_id, lock=True)
            changes = {column: value for column, value in sent.items() if getattr(opp, column) != value}
            if not changes:
                return render_opportunity(opp)  # nothing changed: no write, no event
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
            view = render_opportunity(opp)
            record_event(session, "opportunity.updated", org_id, view, now)
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

    def mark_closed_won(self, principal: Principal, opportunity_id: UUID) -> dict[str, Any]:
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
            view = render_opportunity(opp)
            record_event(session, "opportunity.closed_won", org_id, view, now)
            return view
