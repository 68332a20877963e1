"""Request and response bodies of ``/opportunities``."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any
from uuid import UUID

from pydantic import MISSING, Field, StringConstraints

from dps_common.openapi.examples import DecimalText, example

from dps_api.domain.money import format_money
from dps_api.domain.opportunity_views import OpportunityView
from dps_api.domain.vocabulary import OpportunityStage
from dps_api.schemas.common import (
    UNSENT,
    CurrencyCode,
    DecimalString,
    Name,
    RequestModel,
    ResponseModel,
    unsent,
)

CrmId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=100, strip_whitespace=True),
    Field(description="The opportunity's id in the CRM; unique within the organization."),
]
Amount = Annotated[
    DecimalString,
    Field(description="Non-negative, with no more decimals than the currency's minor units (JPY 0, USD 2)."),
]
_STAGE_DOC = "CLOSED_WON is set only by POST /opportunities/{id}/closed-won."


class OpportunityCreate(RequestModel):
    model_config = example({"crmId": "006Dn000004XyZ1", "name": "Initech renewal 2027", "accountName": "Initech", "ownerUserId": "0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b", "stage": "PROSPECTING", "amount": "120000.00", "currency": "USD", "closeDate": "2027-03-31"})
    crmId: CrmId | None = None
    name: Name
    accountName: Name
    ownerUserId: UUID | None = Field(
        default=None, description="A user of the organization; defaults to the key's user."
    )
    stage: OpportunityStage = Field(default=OpportunityStage.PROSPECTING, description=_STAGE_DOC)
    amount: Amount | None = Field(default=None, description="Requires currency.")
    currency: CurrencyCode | None = None
    closeDate: date | None = None


class OpportunityUpdate(RequestModel):
    """Partial: only the fields sent change. Nullable fields are cleared by sending null."""
    model_config = example({"stage": "NEGOTIATION", "amount": "110000.00"})

    # an explicit null is refused for the non-nullable fields
    crmId: CrmId | None | MISSING = UNSENT
    name: Name | MISSING = UNSENT
    accountName: Name | MISSING = UNSENT
    ownerUserId: UUID | MISSING = unsent(description="A user of the organization.")
    stage: OpportunityStage | MISSING = unsent(
        description=_STAGE_DOC + " Moving a CLOSED_WON opportunity to another stage needs an admin key.",
    )
    amount: Amount | None | MISSING = UNSENT
    currency: CurrencyCode | None | MISSING = UNSENT
    closeDate: date | None | MISSING = UNSENT


class Opportunity(ResponseModel):
    model_config = example({
        "id": "0192a3b4-c5d6-7e8f-9a0b-5c2d3e4f5a6b", "crmId": "006Dn000004XyZ1", "name": "Initech renewal 2027",
        "accountName": "Initech", "ownerUserId": "0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b", "stage": "NEGOTIATION",
        "amount": "120000.00", "currency": "USD", "closeDate": "2027-03-31", "closedWonAt": None,
        "createdAt": "2026-10-14T13:02:11Z", "updatedAt": "2026-11-01T08:45:00Z",
    })
    id: str
    crmId: str | None
    name: str
    accountName: str
    ownerUserId: str
    stage: OpportunityStage
    amount: DecimalText | None = Field(description="Decimal string with the currency's minor units, e.g. \"1234.50\".")
    currency: str | None
    closeDate: date | None
    closedWonAt: datetime | None
    createdAt: datetime
    updatedAt: datetime


class OpportunityList(ResponseModel):
    opportunities: list[Opportunity]
    nextCursor: str | None


def _utc(moment: datetime | None) -> datetime | None:
    return moment.astimezone(UTC) if moment is not None else None


def render_opportunity(opportunity: OpportunityView) -> dict[str, Any]:
    """An opportunity as the API shows it (``Opportunity``), also the snapshot its events carry."""
    amount, currency = opportunity.amount, opportunity.currency
    return {
        "id": str(opportunity.id),
        "crmId": opportunity.crm_id,
        "name": opportunity.name,
        "accountName": opportunity.account_name,
        "ownerUserId": str(opportunity.owner_user_id),
        "stage": opportunity.stage,
        "amount": None if amount is None or currency is None else format_money(amount, currency),
        "currency": currency,
        "closeDate": opportunity.close_date,
        "closedWonAt": _utc(opportunity.closed_won_at),
        "createdAt": _utc(opportunity.created_at),
        "updatedAt": _utc(opportunity.updated_at),
    }
