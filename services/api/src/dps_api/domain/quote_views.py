"""A priced quote as the use cases return it: plain values, no rows, no JSON.

One render function per resource (``dps_api.schemas.quotes.render_quote``) turns these into the API's
JSON; ``snapshot`` turns them into the contract the billing connector reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import NamedTuple
from uuid import UUID

from dps_api.domain.money import format_price, round_money
from dps_api.domain.pricing import QuoteTotals, billing_period_unit_price, is_one_time
from dps_api.domain.quote_snapshot import QuoteSnapshot, QuoteSnapshotLine
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus


class QuoteLineView(NamedTuple):
    """A line as read. A named tuple: a quote's read builds one per line from the row's tuple, and
    a frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field) cost more than the read."""

    id: UUID
    position: int  # 1..n, contiguous
    product_id: UUID
    product_spec_id: str
    product_version: int  # the pinned version
    product_name: str
    product_short_name: str | None
    custom_name: str | None
    price_model: PriceModel
    price_frequency: PriceFrequency
    locked: bool
    quantity: Decimal
    list_unit_price: Decimal  # tier-resolved for the quantity
    discount_percent: Decimal  # 4 places; negative for a markup
    net_unit_price: Decimal
    amount_per_billing_period: Decimal | None  # None: a one-time line
    one_time_amount: Decimal | None  # None: a recurring line

    @property
    def recurring(self) -> bool:
        return not is_one_time(self.price_model, self.price_frequency)


@dataclass(frozen=True, slots=True)
class QuoteView:
    id: UUID
    organization_id: UUID
    name: str
    opportunity_id: UUID | None
    owner_user_id: UUID
    status: QuoteStatus
    currency: str
    billing_frequency: BillingFrequency
    subscription_term_months: int
    start_date: date | None
    end_date: date | None
    pricebook_id: UUID | None
    pricebook_version: int | None
    totals: QuoteTotals  # its locked_below_list is the quote's
    line_count: int
    created_at: datetime
    updated_at: datetime
    lines: tuple[QuoteLineView, ...] | None  # None: a list item, read without its lines


def snapshot_line(line: QuoteLineView, billing_frequency: BillingFrequency, currency: str) -> QuoteSnapshotLine:
    unit_amount = billing_period_unit_price(
        line.net_unit_price, line.price_model, line.price_frequency, billing_frequency
    )
    amount = line.amount_per_billing_period if line.recurring else line.one_time_amount
    if amount is None:
        raise ValueError(f"quote line {line.id} has no amount of its kind")
    return QuoteSnapshotLine(
        id=line.id,
        position=line.position,
        product_id=line.product_id,
        product_spec_id=line.product_spec_id,
        product_version=line.product_version,
        product_name=line.product_name,
        product_short_name=line.product_short_name,
        custom_name=line.custom_name,
        price_model=line.price_model,
        price_frequency=line.price_frequency,
        quantity=line.quantity,
        # written as the API writes unit prices: at least the minor units, more only when it has them
        unit_amount=Decimal(format_price(unit_amount, currency)),
        recurring=line.recurring,
        amount=round_money(amount, currency),
    )


def snapshot(quote: QuoteView, opportunity_crm_id: str | None) -> QuoteSnapshot:
    """The quote as the billing connector reads it (``quote`` read with its lines)."""
    if quote.lines is None:
        raise ValueError("a quote snapshot needs the quote's lines")
    currency = quote.currency
    return QuoteSnapshot(
        id=quote.id,
        organization_id=quote.organization_id,
        name=quote.name,
        status=quote.status,
        owner_user_id=quote.owner_user_id,
        opportunity_id=quote.opportunity_id,
        opportunity_crm_id=opportunity_crm_id,
        currency=currency,
        billing_frequency=quote.billing_frequency,
        subscription_term_months=quote.subscription_term_months,
        start_date=quote.start_date,
        end_date=quote.end_date,
        pricebook_id=quote.pricebook_id,
        pricebook_version=quote.pricebook_version,
        recurring_per_billing_period=round_money(quote.totals.recurring_per_billing_period, currency),
        one_time=round_money(quote.totals.one_time, currency),
        total_contract_value=round_money(quote.totals.total_contract_value, currency),
        lines=tuple(snapshot_line(line, quote.billing_frequency, currency) for line in quote.lines),
    )
