"""Request and response bodies of ``/opportunities``."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Annotated
from uuid import UUID

from pydantic import Field, StringConstraints

from dps_api.schemas.common import (
    CurrencyCode,
    DecimalString,
    Name,
    RequestModel,
    ResponseModel,
)


class OpportunityStage(StrEnum):
    PROSPECTING = "PROSPECTING"
    QUALIFICATION = "QUALIFICATION"
    PROPOSAL = "PROPOSAL"
    NEGOTIATION = "NEGOTIATION"
    CLOSED_WON = "CLOSED_WON"
    CLOSED_LOST = "CLOSED_LOST"


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

    # non-nullable fields default to None only to mean "not sent"; an explicit null is rejected
    crmId: CrmId | None = None
    name: Name = Field(default=None)
    accountName: Name = Field(default=None)
    ownerUserId: UUID = Field(default=None, description="A user of the organization.")
    stage: OpportunityStage = Field(
        default=None,
        description=_STAGE_DOC + " Moving a CLOSED_WON opportunity to another stage needs an admin key.",
    )
    amount: Amount | None = None
    currency: CurrencyCode | None = None
    closeDate: date | None = None


class Opportunity(ResponseModel):
    id: str
    crmId: str | None
    name: str
    accountName: str
    ownerUserId: str
    stage: OpportunityStage
    amount: str | None = Field(description="Decimal string with the currency's minor units, e.g. \"1234.50\".")
    currency: str | None
    closeDate: date | None
    closedWonAt: datetime | None
    createdAt: datetime
    updatedAt: datetime


class OpportunityList(ResponseModel):
    opportunities: list[Opportunity]
    nextCursor: str | None
