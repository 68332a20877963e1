"""What the quote use cases are asked to do: plain values, no request bodies.

Partial updates tell "not sent" (``NOT_SENT``) apart from an explicit null (``None``), so clearing a
nullable field and leaving it alone are different commands. Resources build them from request
bodies (a quote's header: each body field sets the command field of its name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any
from uuid import UUID

from dps_api.domain.commands import NOT_SENT, Patch, sent
from dps_api.domain.vocabulary import BillingFrequency


@dataclass(frozen=True, slots=True)
class QuoteLineInput:
    """A new line: the product whose current version is pinned, and the negotiation (at most one of
    ``discount_percent`` and ``net_unit_price``; neither means the list price)."""

    product_id: UUID
    quantity: Decimal = Decimal(1)
    custom_name: str | None = None
    discount_percent: Decimal | None = None
    net_unit_price: Decimal | None = None


@dataclass(frozen=True, slots=True)
class CreateQuote:
    """A new quote. The owner, currency and pricebook are resolved by the use case (defaults, the
    pinned version); every other field but the lines is stored as given, in the column of its name."""

    name: str
    billing_frequency: BillingFrequency
    subscription_term_months: int
    opportunity_id: UUID | None = None
    owner_user_id: UUID | None = None  # None: the principal's user
    currency: str | None = None  # None: the pricebook's
    start_date: date | None = None
    end_date: date | None = None
    pricebook_id: UUID | None = None
    lines: tuple[QuoteLineInput, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class UpdateQuote:
    """A header edit; ``None`` clears a nullable field (opportunity, dates, pricebook)."""

    name: Patch[str] = NOT_SENT
    opportunity_id: Patch[UUID | None] = NOT_SENT
    owner_user_id: Patch[UUID] = NOT_SENT
    currency: Patch[str] = NOT_SENT
    billing_frequency: Patch[BillingFrequency] = NOT_SENT
    subscription_term_months: Patch[int] = NOT_SENT
    start_date: Patch[date | None] = NOT_SENT
    end_date: Patch[date | None] = NOT_SENT
    pricebook_id: Patch[UUID | None] = NOT_SENT

    def sent(self) -> dict[str, Any]:
        """The fields sent, by name (the quote's attribute names), with their new values."""
        return sent(self)


@dataclass(frozen=True, slots=True)
class UpdateQuoteLine:
    """A line edit; sending ``discount_percent`` or ``net_unit_price`` switches the line to that side
    of the negotiation (not both). ``custom_name=None`` clears the custom name."""

    quantity: Patch[Decimal] = NOT_SENT
    custom_name: Patch[str | None] = NOT_SENT
    discount_percent: Patch[Decimal] = NOT_SENT
    net_unit_price: Patch[Decimal] = NOT_SENT
