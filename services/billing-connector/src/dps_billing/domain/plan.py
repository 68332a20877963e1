"""What a push asks the billing platform to create: the plan ``plan_push`` returns.

Every planned object is plain data, already within the platform's limits. The platform client turns
them into request parameters; the quote's line items refer to prices by the quote line they come
from (``line_id``), since the price ids exist only once the prices are created.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dps_billing.domain.notices import Notice


@dataclass(frozen=True)
class Recurring:
    interval: str  # "month" | "year"
    interval_count: int


@dataclass(frozen=True)
class ProductParams:
    name: str
    metadata: dict[str, str]


@dataclass(frozen=True)
class PriceParams:
    currency: str  # lower case
    unit_amount: int  # the platform's minor units
    recurring: Recurring | None  # None: a one-time price


@dataclass(frozen=True)
class PlannedLine:
    """One supported quote line: its product, and the product's price."""

    line_id: str
    product: ProductParams
    price: PriceParams


@dataclass(frozen=True)
class QuoteLineItem:
    line_id: str  # the price created for this quote line
    quantity: int


@dataclass(frozen=True)
class QuoteParams:
    description: str
    line_items: tuple[QuoteLineItem, ...]
    expires_at: int  # unix seconds
    effective_date: int | None  # subscription_data.effective_date, unix seconds; None: not sent
    subscription_metadata: dict[str, str]
    metadata: dict[str, str]


@dataclass(frozen=True)
class PushPlan:
    """``errors`` empty: create ``lines`` (product then price each), then ``quote``. Otherwise create
    nothing: ``lines`` is empty, ``quote`` is None and the errors say why."""

    lines: tuple[PlannedLine, ...]
    quote: QuoteParams | None
    warnings: tuple[Notice, ...] = field(default=())
    errors: tuple[Notice, ...] = field(default=())

    @property
    def blocked(self) -> bool:
        return bool(self.errors)
