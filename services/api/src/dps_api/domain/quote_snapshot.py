"""The quote snapshot the api serves to the billing connector, and its JSON as the api writes it.

The api owns this shape; the connector reads it with its own reader (it never imports this module).
On the wire: money as decimal strings, dates as ISO 8601, enums as their values. The snapshot is
written from the same ``QuoteView`` the API renders: its fields, in their order, up to ``totals``
(a new plain field of the quote is in the snapshot with no change here). The committed example
``tests/contract/fixtures/quote_snapshot.json`` is what this writer renders for a known quote (an api
test checks it), and the connector's tests read that same file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Any
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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "position": self.position,
            "productId": str(self.product_id),
            "productSpecId": self.product_spec_id,
            "productVersion": self.product_version,
            "productName": self.product_name,
            "productShortName": self.product_short_name,
            "customName": self.custom_name,
            "priceModel": self.price_model.value,
            "priceFrequency": self.price_frequency.value,
            "quantity": str(self.quantity),
            "unitAmount": str(self.unit_amount),
            "recurring": self.recurring,
            "amount": str(self.amount),
        }


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def _wire(value: Any) -> Any:
    """A view's value as the snapshot writes it (ids and money as strings, dates ISO, enums by value)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, UUID | Decimal):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


# the view's fields up to its totals, with their names on the wire; the rest is the API's bookkeeping
_VIEW_FIELDS = [f.name for f in fields(QuoteView)]
_HEADER = tuple((name, _camel(name)) for name in _VIEW_FIELDS[: _VIEW_FIELDS.index("totals")])


@dataclass(frozen=True)
class QuoteSnapshot:
    quote: QuoteView  # the header; its totals and lines are written as below
    opportunity_crm_id: str | None  # written after the opportunity's id
    recurring_per_billing_period: Decimal  # the totals at the currency's minor units
    one_time: Decimal
    total_contract_value: Decimal
    lines: tuple[QuoteSnapshotLine, ...]

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for name, key in _HEADER:
            body[key] = _wire(getattr(self.quote, name))
            if name == "opportunity_id":
                body["opportunityCrmId"] = self.opportunity_crm_id
        body["totals"] = {
            "recurringPerBillingPeriod": str(self.recurring_per_billing_period),
            "oneTime": str(self.one_time),
            "totalContractValue": str(self.total_contract_value),
        }
        body["lines"] = [line.to_json() for line in self.lines]
        return body


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
