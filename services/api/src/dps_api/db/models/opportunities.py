"""Opportunities (the CRM's deals) and deal groups (named sets of opportunities)."""

from datetime import date, datetime
from decimal import Decimal
from uuid import UUID

from sqlalchemy import (
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Numeric,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from dps_api.db.base import Base, uuid_pk


class Opportunity(Base):
    __tablename__ = "opportunities"
    __table_args__ = (
        # NULLs are distinct in a unique constraint: many opportunities may lack a CRM id
        UniqueConstraint("organization_id", "crm_id"),
        CheckConstraint("amount IS NULL OR currency IS NOT NULL", name="amount_has_currency"),
        CheckConstraint("amount IS NULL OR amount >= 0", name="amount_not_negative"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    crm_id: Mapped[str | None] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(200))
    account_name: Mapped[str] = mapped_column(String(200))
    owner_user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"), index=True)
    stage: Mapped[str] = mapped_column(String(20))
    amount: Mapped[Decimal | None] = mapped_column(Numeric(21, 6))
    currency: Mapped[str | None] = mapped_column(String(3))
    close_date: Mapped[date | None] = mapped_column(Date)
    closed_won_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DealGroup(Base):
    __tablename__ = "deal_groups"

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(String(2000))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DealGroupMember(Base):
    """One opportunity in one deal group; the opportunity_id index serves the lookup by opportunity."""

    __tablename__ = "deal_group_opportunities"

    deal_group_id: Mapped[UUID] = mapped_column(ForeignKey("deal_groups.id", ondelete="CASCADE"), primary_key=True)
    opportunity_id: Mapped[UUID] = mapped_column(ForeignKey("opportunities.id"), primary_key=True, index=True)
