"""A priced quote as the use cases return it: plain values, no rows, no JSON.

``QuoteView`` is the one list of a quote's fields past the request bodies: the ORM model has a column
of each name (``QUOTE_COLUMNS``), every read makes the view from those columns (``quote_view``), the
API's JSON is rendered from it (``dps_api.schemas.quotes.render_quote``) and the snapshot the billing
connector reads is written from it, in its field order (``dps_api.domain.quote_snapshot``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import date, datetime
from decimal import Decimal
from typing import Any, NamedTuple
from uuid import UUID

from dps_api.domain.pricing import QuoteTotals, is_one_time
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
    """The quote's fields, each but ``totals`` and ``lines`` a column of the quote of the same name.
    A new plain field of the quote goes here (before ``totals``: the snapshot writes the fields in
    this order and leaves out those from ``totals`` on)."""

    id: UUID
    organization_id: UUID
    name: str
    status: QuoteStatus
    owner_user_id: UUID
    opportunity_id: UUID | None
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


QUOTE_FIELDS = tuple(f.name for f in fields(QuoteView) if f.name not in ("totals", "lines"))
TOTALS_FIELDS = tuple(f.name for f in fields(QuoteTotals))
# the quote's columns a view is made of, in the order ``quote_view`` takes their values
QUOTE_COLUMNS = QUOTE_FIELDS + TOTALS_FIELDS
_TOTALS_AT = len(QUOTE_FIELDS)


def quote_view(values: Sequence[Any], lines: tuple[QuoteLineView, ...] | None) -> QuoteView:
    """The quote from the values of its ``QUOTE_COLUMNS`` (a row's, or a row object's attributes),
    with ``lines`` (None: read without them)."""
    return QuoteView(
        **dict(zip(QUOTE_FIELDS, values[:_TOTALS_AT], strict=True)),
        totals=QuoteTotals(*values[_TOTALS_AT:]),
        lines=lines,
    )
