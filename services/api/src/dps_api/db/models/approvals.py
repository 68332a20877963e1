"""Approval configuration (groups, rules, rule groups) and approval requests.

A request snapshots its chain (steps with their rules, approver groups and votes) and its decision
history as JSON when it is submitted: later configuration edits never change a request in flight.
"""

from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from dps_api.db.base import Base, uuid_pk
from dps_api.db.models.quotes import enum_column, one_of
from dps_api.domain.approval_flow import RequestStatus
from dps_api.domain.approval_rules import ConditionType


class ApprovalGroup(Base):
    __tablename__ = "approval_groups"
    __table_args__ = (CheckConstraint("required_approvals >= 1", name="required_approvals_positive"),)

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    required_approvals: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApprovalGroupMember(Base):
    __tablename__ = "approval_group_members"

    approval_group_id: Mapped[UUID] = mapped_column(
        ForeignKey("approval_groups.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)


class ApprovalRuleGroup(Base):
    """One step of the approval chain; steps run in ascending position (ties by id)."""

    __tablename__ = "approval_rule_groups"

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApprovalRule(Base):
    __tablename__ = "approval_rules"
    __table_args__ = (
        CheckConstraint(one_of("condition_type", ConditionType), name="condition_type"),
        CheckConstraint("threshold IS NULL OR threshold >= 0", name="threshold_not_negative"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    condition_type: Mapped[str] = mapped_column(String(40))
    threshold: Mapped[Decimal | None] = mapped_column(Numeric(21, 6))
    currency: Mapped[str | None] = mapped_column(String(3))
    approval_group_id: Mapped[UUID] = mapped_column(ForeignKey("approval_groups.id"), index=True)
    rule_group_id: Mapped[UUID | None] = mapped_column(ForeignKey("approval_rule_groups.id"), index=True)
    active: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApprovalRequest(Base):
    __tablename__ = "approval_requests"
    __table_args__ = (
        # the list's keyset query: WHERE organization_id = ? [AND status = ?] AND id < ? ORDER BY id DESC
        Index("ix_approval_requests_organization_id", "organization_id", "id"),
        # at most one request in flight per quote
        Index(
            "uq_approval_requests_pending_quote",
            "quote_id",
            unique=True,
            postgresql_where=text(f"status = '{RequestStatus.PENDING.value}'"),
        ),
        CheckConstraint(one_of("status", RequestStatus), name="status"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"))
    quote_id: Mapped[UUID] = mapped_column(ForeignKey("quotes.id"), index=True)
    quote_owner_user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"))
    requested_by_user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"))
    status: Mapped[RequestStatus] = mapped_column(enum_column(RequestStatus, 10))
    current_step: Mapped[int | None] = mapped_column(Integer)
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    decisions: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
