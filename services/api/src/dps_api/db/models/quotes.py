"""Pricing quotes and their lines.

A line copies the pinned product version's names, model, frequency and prices (list price and
tiers in the quote's currency), so a quote never changes when the catalog does. Computed values
(line amounts, quote totals) are stored at write time: a quote reads back exactly as it was priced,
and the list and the approvals work read totals without re-pricing.
"""

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any
from uuid import UUID

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Enum,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    Numeric,
    String,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from dps_api.db.base import Base, uuid_pk
from dps_api.domain.vocabulary import BillingFrequency, PriceBasis, PriceFrequency, PriceModel, QuoteStatus


def one_of(column: str, values: Iterable[StrEnum]) -> str:
    """The CHECK constraint's SQL allowing exactly the enum's values (the migrations hold the same)."""
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


def enum_column(kind: type[StrEnum], length: int) -> Enum:
    """A VARCHAR holding the enum's values, read back as its members. Its CHECK constraint is declared
    by name in ``__table_args__`` (``one_of``), not generated here."""
    return Enum(
        kind,
        native_enum=False,
        create_constraint=False,
        length=length,
        validate_strings=True,
        values_callable=lambda members: [m.value for m in members],
    )


class Quote(Base):
    __tablename__ = "quotes"
    __table_args__ = (
        # the list's keyset query: WHERE organization_id = ? [AND filter] AND id > ? ORDER BY id
        Index("ix_quotes_organization_id", "organization_id", "id"),
        ForeignKeyConstraint(
            ["pricebook_id", "pricebook_version"], ["pricebook_versions.pricebook_id", "pricebook_versions.version"]
        ),
        CheckConstraint(one_of("status", QuoteStatus), name="status"),
        CheckConstraint(one_of("billing_frequency", BillingFrequency), name="billing_frequency"),
        CheckConstraint("subscription_term_months BETWEEN 1 AND 120", name="subscription_term_months"),
        CheckConstraint("end_date IS NULL OR start_date IS NULL OR end_date >= start_date", name="end_after_start"),
        CheckConstraint("(pricebook_id IS NULL) = (pricebook_version IS NULL)", name="pricebook_pinned"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"))
    name: Mapped[str] = mapped_column(String(200))
    opportunity_id: Mapped[UUID | None] = mapped_column(ForeignKey("opportunities.id"), index=True)
    owner_user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"), index=True)
    status: Mapped[QuoteStatus] = mapped_column(enum_column(QuoteStatus, 20))
    currency: Mapped[str] = mapped_column(String(3))
    billing_frequency: Mapped[BillingFrequency] = mapped_column(enum_column(BillingFrequency, 20))
    subscription_term_months: Mapped[int] = mapped_column(Integer)
    start_date: Mapped[date | None] = mapped_column(Date)
    end_date: Mapped[date | None] = mapped_column(Date)
    pricebook_id: Mapped[UUID | None] = mapped_column()
    pricebook_version: Mapped[int | None] = mapped_column(Integer)
    # totals, recomputed by every change to the quote or its lines (money at the currency's minor units)
    recurring_per_billing_period: Mapped[Decimal] = mapped_column(Numeric)
    one_time: Mapped[Decimal] = mapped_column(Numeric)
    total_contract_value: Mapped[Decimal] = mapped_column(Numeric)
    list_total_contract_value: Mapped[Decimal] = mapped_column(Numeric)
    max_discount_percent: Mapped[Decimal] = mapped_column(Numeric)  # negative: every line marked up
    locked_below_list: Mapped[bool] = mapped_column(Boolean)
    line_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class QuoteLine(Base):
    __tablename__ = "quote_lines"
    __table_args__ = (
        Index("ix_quote_lines_quote_id", "quote_id", "position"),
        # the pinned version; it references products.id through product_versions.product_id
        ForeignKeyConstraint(
            ["product_id", "product_version"], ["product_versions.product_id", "product_versions.version"]
        ),
        CheckConstraint(one_of("price_basis", PriceBasis), name="price_basis"),
        CheckConstraint("quantity > 0", name="quantity_positive"),
        CheckConstraint("net_unit_price >= 0", name="net_unit_price_not_negative"),
        # a line is either recurring or one-time
        CheckConstraint("(amount_per_billing_period IS NULL) <> (one_time_amount IS NULL)", name="one_kind_of_amount"),
    )

    id: Mapped[UUID] = uuid_pk()
    quote_id: Mapped[UUID] = mapped_column(ForeignKey("quotes.id", ondelete="CASCADE"))
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"))
    position: Mapped[int] = mapped_column(Integer)  # 1..n, contiguous
    # the pinned product version, copied
    product_id: Mapped[UUID] = mapped_column()
    product_version: Mapped[int] = mapped_column(Integer)
    product_spec_id: Mapped[str] = mapped_column(String(100))
    product_name: Mapped[str] = mapped_column(String(200))
    product_short_name: Mapped[str | None] = mapped_column(String(200))
    custom_name: Mapped[str | None] = mapped_column(String(200))
    # copied from the product version, whose CHECK constraints hold them to the vocabulary
    price_model: Mapped[PriceModel] = mapped_column(enum_column(PriceModel, 20))
    price_frequency: Mapped[PriceFrequency] = mapped_column(enum_column(PriceFrequency, 20))
    locked: Mapped[bool] = mapped_column(Boolean)
    catalog_unit_price: Mapped[Decimal] = mapped_column(Numeric)  # pricebook entry or list price, pinned
    tiers: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)  # [{"upTo": "10" | null, "unitPrice": "9.00"}]
    # the negotiation: DISCOUNT keeps discount_percent, NET keeps net_unit_price; the other is derived
    price_basis: Mapped[PriceBasis] = mapped_column(enum_column(PriceBasis, 10))
    quantity: Mapped[Decimal] = mapped_column(Numeric)
    list_unit_price: Mapped[Decimal] = mapped_column(Numeric)  # tier-resolved for the quantity
    net_unit_price: Mapped[Decimal] = mapped_column(Numeric)
    discount_percent: Mapped[Decimal] = mapped_column(Numeric)  # 4 places; negative for a markup
    amount_per_billing_period: Mapped[Decimal | None] = mapped_column(Numeric)  # None: a one-time line
    one_time_amount: Mapped[Decimal | None] = mapped_column(Numeric)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
