"""Catalog: products and pricebooks, each with an immutable version history.

``products`` and ``pricebooks`` hold the current version (the hot list reads one table); every
version, the current one included, is also written once to ``product_versions`` /
``pricebook_versions`` so a quote can keep pricing the version it pinned forever.
Money in JSONB columns is a map of ISO 4217 code to a decimal string at the currency's minor units.
"""

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any
from uuid import UUID

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    Numeric,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from dps_api.db.base import Base, uuid_pk
from dps_api.domain.vocabulary import PriceFrequency, PriceModel


def one_of(column: str, values: Iterable[StrEnum]) -> str:
    """The CHECK that holds ``column`` to an enum's values: ``price_model IN ('FLAT', ...)``."""
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


def _timestamp() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True))


class _ProductFields:
    """The fields a product version consists of, shared by the current row and its history."""

    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"))
    spec_id: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    short_name: Mapped[str | None] = mapped_column(String(200))
    active: Mapped[bool] = mapped_column(Boolean)
    price_model: Mapped[str] = mapped_column(String(20))  # a PriceModel
    price_frequency: Mapped[str] = mapped_column(String(20))  # a PriceFrequency
    list_prices: Mapped[dict[str, str]] = mapped_column(JSONB)  # {"USD": "100.00"}
    # TIERED only: {"USD": [{"upTo": "10", "unitPrice": "9.00"}, {"upTo": null, "unitPrice": "8.00"}]}
    tiers: Mapped[dict[str, list[dict[str, Any]]]] = mapped_column(JSONB)
    locked: Mapped[bool] = mapped_column(Boolean)
    cost: Mapped[dict[str, str]] = mapped_column(JSONB)  # unit cost per currency; admin keys only
    created_at: Mapped[datetime] = _timestamp()  # the product's creation
    updated_at: Mapped[datetime] = _timestamp()  # when this version was made


class Product(_ProductFields, Base):
    __tablename__ = "products"
    __table_args__ = (
        UniqueConstraint("organization_id", "spec_id"),
        # the list's keyset query: WHERE organization_id = ? AND id > ? ORDER BY id LIMIT ?
        Index("ix_products_organization_id", "organization_id", "id"),
        CheckConstraint(one_of("price_model", PriceModel), name="price_model"),
        CheckConstraint(one_of("price_frequency", PriceFrequency), name="price_frequency"),
        CheckConstraint("version >= 1", name="version"),
    )

    id: Mapped[UUID] = uuid_pk()


class ProductVersion(_ProductFields, Base):
    """Immutable: one row per version of a product, written when that version is made."""

    __tablename__ = "product_versions"

    product_id: Mapped[UUID] = mapped_column(ForeignKey("products.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)


class Pricebook(Base):
    __tablename__ = "pricebooks"
    __table_args__ = (Index("ix_pricebooks_organization_id", "organization_id", "id"),)

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"))
    version: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    currency: Mapped[str] = mapped_column(String(3))
    active: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = _timestamp()
    updated_at: Mapped[datetime] = _timestamp()


class PricebookVersion(Base):
    """Immutable: one row per version of a pricebook; its entries hang off (pricebook_id, version)."""

    __tablename__ = "pricebook_versions"

    pricebook_id: Mapped[UUID] = mapped_column(ForeignKey("pricebooks.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"))
    name: Mapped[str] = mapped_column(String(200))
    currency: Mapped[str] = mapped_column(String(3))
    active: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = _timestamp()  # when this version was made


class PricebookEntry(Base):
    """A product's unit price in one pricebook version (in the pricebook's currency)."""

    __tablename__ = "pricebook_entries"
    __table_args__ = (
        ForeignKeyConstraint(
            ["pricebook_id", "version"],
            ["pricebook_versions.pricebook_id", "pricebook_versions.version"],
        ),
        CheckConstraint("unit_price >= 0", name="unit_price_not_negative"),
    )

    pricebook_id: Mapped[UUID] = mapped_column(primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    product_id: Mapped[UUID] = mapped_column(ForeignKey("products.id"), primary_key=True)
    unit_price: Mapped[Decimal] = mapped_column(Numeric)  # stored at the currency's minor units


class PricebookUser(Base):
    """Users a pricebook is assigned to (who may price quotes with it); not versioned."""

    __tablename__ = "pricebook_users"

    pricebook_id: Mapped[UUID] = mapped_column(ForeignKey("pricebooks.id"), primary_key=True)
    user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"), primary_key=True)
