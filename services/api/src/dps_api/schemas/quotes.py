"""Request and response bodies of ``/pricing-quotes`` and its lines."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Annotated, Any
from uuid import UUID

from pydantic import MISSING, Field, StringConstraints

from dps_common.openapi.examples import DecimalText, example

from dps_api.domain.limits import MAX_LINES
from dps_api.domain.money import currency_format, format_decimal
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus
from dps_api.schemas.common import (
    UNSENT,
    CurrencyCode,
    DecimalString,
    Name,
    RequestModel,
    ResponseModel,
    unsent,
)

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
    model_config = example({"productId": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "quantity": "25", "discountPercent": "10"})
    productId: UUID = Field(description="A product of the organization; its current version is pinned.")
    quantity: Quantity = "1"
    customName: CustomName | None = None
    discountPercent: DiscountPercent | None = None
    netUnitPrice: NetUnitPrice | None = None


class QuoteLineUpdate(RequestModel):
    """Partial: only the fields sent change. customName is cleared by sending null."""
    model_config = example({"quantity": "30"})

    quantity: Quantity | MISSING = UNSENT
    customName: CustomName | None | MISSING = UNSENT
    discountPercent: DiscountPercent | MISSING = unsent(description=_PRICE_DOC)
    netUnitPrice: NetUnitPrice | MISSING = unsent(description=_PRICE_DOC)


class QuoteCreate(RequestModel):
    model_config = example({"name": "Initech renewal", "opportunityId": "0192a3b4-c5d6-7e8f-9a0b-5c2d3e4f5a6b", "currency": "USD", "billingFrequency": "ANNUAL", "subscriptionTermMonths": 24, "startDate": "2027-01-01", "lines": [{"productId": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "quantity": "25", "discountPercent": "10"}]})
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
    model_config = example({"subscriptionTermMonths": 36})

    name: Name | MISSING = UNSENT
    opportunityId: UUID | None | MISSING = UNSENT
    ownerUserId: UUID | MISSING = unsent(description="Another user of the organization needs an admin key.")
    currency: CurrencyCode | MISSING = UNSENT
    billingFrequency: BillingFrequency | MISSING = UNSENT
    subscriptionTermMonths: TermMonths | MISSING = UNSENT
    startDate: date | None | MISSING = UNSENT
    endDate: date | None | MISSING = UNSENT
    pricebookId: UUID | None | MISSING = unsent(description="null: product list prices from now on.")


class QuoteLine(ResponseModel):
    id: str
    position: int = Field(description="1-based order of the line in the quote.")
    productId: str
    productSpecId: str
    productVersion: int = Field(description="The pinned product version.")
    productName: str
    productShortName: str | None
    customName: str | None
    priceModel: PriceModel
    priceFrequency: PriceFrequency
    locked: bool
    quantity: DecimalText
    listUnitPrice: DecimalText = Field(description="Pinned unit list price (the pricebook's, else the product's; by tier).")
    discountPercent: DecimalText = Field(description="4 decimal places; negative when netUnitPrice is above list.")
    netUnitPrice: DecimalText
    amountPerBillingPeriod: DecimalText | None = Field(description="Recurring lines; at the currency's minor units.")
    oneTimeAmount: DecimalText | None = Field(description="One-time lines (ONE_TIME_FEE, ONE_TIME); minor units.")


class QuoteTotals(ResponseModel):
    recurringPerBillingPeriod: DecimalText
    oneTime: DecimalText
    totalContractValue: DecimalText = Field(description="Recurring per month x term + one-time, at minor units.")
    listTotalContractValue: DecimalText = Field(description="The same at list prices.")
    maxDiscountPercent: DecimalText


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
    model_config = example({
        "id": "0192a3b4-c5d6-7e8f-9a0b-7a1b2c3d4e5f", "name": "Initech renewal",
        "opportunityId": "0192a3b4-c5d6-7e8f-9a0b-5c2d3e4f5a6b", "ownerUserId": "0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b",
        "status": "DRAFT", "currency": "USD", "billingFrequency": "ANNUAL", "subscriptionTermMonths": 24,
        "startDate": "2027-01-01", "endDate": "2028-12-31", "pricebookId": None, "pricebookVersion": None,
        "lockedBelowList": False, "lineCount": 1,
        "totals": {"recurringPerBillingPeriod": "10800.00", "oneTime": "0.00", "totalContractValue": "21600.00",
                   "listTotalContractValue": "24000.00", "maxDiscountPercent": "10.0000"},
        "createdAt": "2026-11-02T09:15:00Z", "updatedAt": "2026-11-02T09:20:41Z",
        "lines": [{
            "id": "0192a3b4-c5d6-7e8f-9a0b-8b1c2d3e4f5a", "position": 1, "productId": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b",
            "productSpecId": "CRM-SEAT", "productVersion": 3, "productName": "CRM seat", "productShortName": "Seat",
            "customName": None, "priceModel": "PER_UNIT", "priceFrequency": "MONTHLY", "locked": False, "quantity": "25",
            "listUnitPrice": "40.00", "discountPercent": "10.0000", "netUnitPrice": "36.00",
            "amountPerBillingPeriod": "10800.00", "oneTimeAmount": None,
        }],
    })
    lines: list[QuoteLine]


class PricingQuoteList(ResponseModel):
    pricingQuotes: list[QuoteSummary] = Field(description="Quotes without their lines; GET the quote for them.")
    nextCursor: str | None


# --- rendering: the one place a quote becomes JSON (responses and the quote.* events' data) ---


def _id(value: UUID | None) -> str | None:
    return None if value is None else str(value)


def render_lines(lines: Iterable[QuoteLineView], currency: str) -> list[dict[str, Any]]:
    """``QuoteLine``s. The hot part of a quote's read: the currency's formatter is looked up once, not
    per amount."""
    money = currency_format(currency)
    price, amount, plain = money.price, money.money, format_decimal
    return [
        {
            "id": str(line.id),
            "position": line.position,
            "productId": str(line.product_id),
            "productSpecId": line.product_spec_id,
            "productVersion": line.product_version,
            "productName": line.product_name,
            "productShortName": line.product_short_name,
            "customName": line.custom_name,
            "priceModel": line.price_model,
            "priceFrequency": line.price_frequency,
            "locked": line.locked,
            "quantity": plain(line.quantity),
            "listUnitPrice": price(line.list_unit_price),
            "discountPercent": format(line.discount_percent, "f"),
            "netUnitPrice": price(line.net_unit_price),
            "amountPerBillingPeriod": None if (recurring := line.amount_per_billing_period) is None else amount(recurring),
            "oneTimeAmount": None if (one_time := line.one_time_amount) is None else amount(one_time),
        }
        for line in lines
    ]


def render_quote(quote: QuoteView) -> dict[str, Any]:
    """A ``PricingQuote``, or a ``QuoteSummary`` for a quote read without its lines (list items)."""
    currency = quote.currency
    money = currency_format(currency).money
    totals = quote.totals
    view: dict[str, Any] = {
        "id": str(quote.id),
        "name": quote.name,
        "opportunityId": _id(quote.opportunity_id),
        "ownerUserId": str(quote.owner_user_id),
        "status": quote.status,
        "currency": currency,
        "billingFrequency": quote.billing_frequency,
        "subscriptionTermMonths": quote.subscription_term_months,
        "startDate": quote.start_date,
        "endDate": quote.end_date,
        "pricebookId": _id(quote.pricebook_id),
        "pricebookVersion": quote.pricebook_version,
        "lockedBelowList": totals.locked_below_list,
        "lineCount": quote.line_count,
        "totals": {
            "recurringPerBillingPeriod": money(totals.recurring_per_billing_period),
            "oneTime": money(totals.one_time),
            "totalContractValue": money(totals.total_contract_value),
            "listTotalContractValue": money(totals.list_total_contract_value),
            "maxDiscountPercent": format(totals.max_discount_percent, "f"),
        },
        "createdAt": quote.created_at.astimezone(UTC),
        "updatedAt": quote.updated_at.astimezone(UTC),
    }
    if quote.lines is not None:
        view["lines"] = render_lines(quote.lines, currency)
    return view
