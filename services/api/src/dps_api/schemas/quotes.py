"""Request and response bodies of ``/pricing-quotes`` and its lines."""

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

MAX_LINES = 500


class QuoteStatus(StrEnum):
    DRAFT = "DRAFT"
    PENDING_APPROVAL = "PENDING_APPROVAL"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"


class BillingFrequency(StrEnum):
    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    SEMI_ANNUAL = "SEMI_ANNUAL"
    ANNUAL = "ANNUAL"


CustomName = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
TermMonths = Annotated[int, Field(ge=1, le=120, description="Subscription term in months, 1..120.")]
Quantity = Annotated[DecimalString, Field(description="Greater than 0; for HOURLY products, hours per price period.")]
DiscountPercent = Annotated[
    DecimalString, Field(description="0..100, kept to 4 decimal places. Give this or netUnitPrice, not both.")
]
NetUnitPrice = Annotated[
    DecimalString,
    Field(description="Negotiated unit price (>= 0) in the quote currency. Give this or discountPercent, not both."),
]
_PRICE_DOC = (
    "Give discountPercent or netUnitPrice (not both: 400); neither means the list price. Locked products "
    "may go below list only with an admin key (403 `locked_price` otherwise)."
)


class QuoteLineCreate(RequestModel):
    productId: UUID = Field(description="A product of the organization; its current version is pinned.")
    quantity: Quantity = "1"
    customName: CustomName | None = None
    discountPercent: DiscountPercent | None = None
    netUnitPrice: NetUnitPrice | None = None


class QuoteLineUpdate(RequestModel):
    """Partial: only the fields sent change. customName is cleared by sending null."""

    # non-nullable fields default to None only to mean "not sent"; an explicit null is rejected
    quantity: Quantity = Field(default=None)
    customName: CustomName | None = None
    discountPercent: DiscountPercent = Field(default=None, description=_PRICE_DOC)
    netUnitPrice: NetUnitPrice = Field(default=None, description=_PRICE_DOC)


class QuoteCreate(RequestModel):
    name: Name
    opportunityId: UUID | None = Field(default=None, description="An opportunity of the organization.")
    ownerUserId: UUID | None = Field(
        default=None, description="Defaults to the key's user; another user of the organization needs an admin key."
    )
    currency: CurrencyCode | None = Field(
        default=None, description="ISO 4217 target currency; defaults to the pricebook's, required without one."
    )
    billingFrequency: BillingFrequency
    subscriptionTermMonths: TermMonths
    startDate: date | None = None
    endDate: date | None = Field(default=None, description="On or after startDate.")
    pricebookId: UUID | None = Field(
        default=None,
        description="A pricebook the key's user may use; its current version is pinned. None: product list prices.",
    )
    lines: list[QuoteLineCreate] = Field(default_factory=list, max_length=MAX_LINES)


class QuoteUpdate(RequestModel):
    """Partial: only the fields sent change. Nullable fields are cleared by sending null.

    Changing currency or pricebookId re-prices every line at its pinned product version, keeping each
    line's discount percent. Editing an APPROVED or REJECTED quote returns it to DRAFT."""

    name: Name = Field(default=None)
    opportunityId: UUID | None = None
    ownerUserId: UUID = Field(default=None, description="Another user of the organization needs an admin key.")
    currency: CurrencyCode = Field(default=None)
    billingFrequency: BillingFrequency = Field(default=None)
    subscriptionTermMonths: TermMonths = Field(default=None)
    startDate: date | None = None
    endDate: date | None = None
    pricebookId: UUID | None = Field(default=None, description="null: product list prices from now on.")


class QuoteLine(ResponseModel):
    id: str
    position: int = Field(description="1-based order of the line in the quote.")
    productId: str
    productSpecId: str
    productVersion: int = Field(description="The pinned product version.")
    productName: str
    productShortName: str | None
    customName: str | None
    priceModel: str
    priceFrequency: str
    locked: bool
    quantity: str
    listUnitPrice: str = Field(description="Pinned unit list price (the pricebook's, else the product's; by tier).")
    discountPercent: str = Field(description="4 decimal places; negative when netUnitPrice is above list.")
    netUnitPrice: str
    amountPerBillingPeriod: str | None = Field(description="Recurring lines; at the currency's minor units.")
    oneTimeAmount: str | None = Field(description="One-time lines (ONE_TIME_FEE, ONE_TIME); minor units.")


class QuoteTotals(ResponseModel):
    recurringPerBillingPeriod: str
    oneTime: str
    totalContractValue: str = Field(description="Recurring per month x term + one-time, at minor units.")
    listTotalContractValue: str = Field(description="The same at list prices.")
    maxDiscountPercent: str


class QuoteSummary(ResponseModel):
    id: str
    name: str
    opportunityId: str | None
    ownerUserId: str
    status: QuoteStatus
    currency: str
    billingFrequency: BillingFrequency
    subscriptionTermMonths: int
    startDate: date | None
    endDate: date | None
    pricebookId: str | None
    pricebookVersion: int | None = Field(description="The pinned pricebook version.")
    lockedBelowList: bool = Field(description="A locked product is priced below its list price (admin only).")
    lineCount: int
    totals: QuoteTotals
    createdAt: datetime
    updatedAt: datetime


class PricingQuote(QuoteSummary):
    lines: list[QuoteLine]


class PricingQuoteList(ResponseModel):
    pricingQuotes: list[QuoteSummary] = Field(description="Quotes without their lines; GET the quote for them.")
    nextCursor: str | None
