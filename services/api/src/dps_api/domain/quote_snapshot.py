"""The quote snapshot the api serves to the billing connector (``schemas.quote_snapshots`` writes its JSON).

The api owns this shape; the connector reads it with its own reader (it never imports this module).
On the wire: money as decimal strings, dates as ISO 8601, enums as their values. The snapshot is
made from the same ``QuoteView`` the API renders: its fields, in their order, up to ``totals``
(a new plain field of the quote is in the snapshot with no change here).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from uuid import UUID

from dps_api.domain.money import format_price, round_money
from dps_api.domain.pricing import billing_period_unit_price
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel


@dataclass(frozen=True)
class QuoteSnapshotLine:
    id: UUID
    position: int
    product_id: UUID
    product_spec_id: str
    product_version: int
    product_name: str
    product_short_name: str | None
    custom_name: str | None
    price_model: PriceModel
    price_frequency: PriceFrequency
    quantity: Decimal
    # the negotiated price of one unit for one billing period of the quote (recurring lines) or once
    # (one-time lines), exact: net unit price x billing period months / price frequency months
    unit_amount: Decimal
    recurring: bool
    amount: Decimal  # the line's amount per billing period (recurring) or once, at minor units


@dataclass(frozen=True)
class QuoteSnapshot:
    quote: QuoteView  # the header; its totals and lines are written as below
    opportunity_crm_id: str | None  # written after the opportunity's id
    recurring_per_billing_period: Decimal  # the totals at the currency's minor units
    one_time: Decimal
    total_contract_value: Decimal
    lines: tuple[QuoteSnapshotLine, ...]


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
        quote=quote,
        opportunity_crm_id=opportunity_crm_id,
        recurring_per_billing_period=round_money(quote.totals.recurring_per_billing_period, currency),
        one_time=round_money(quote.totals.one_time, currency),
        total_contract_value=round_money(quote.totals.total_contract_value, currency),
        lines=tuple(snapshot_line(line, quote.billing_frequency, currency) for line in quote.lines),
    )
