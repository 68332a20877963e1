"""Approval groups, rules and rule groups as the configuration use cases return them: plain values,
no rows, no JSON. ``dps_api.schemas.approval_config`` renders them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from dps_api.domain.approval_rules import Condition


@dataclass(frozen=True)
class ApprovalGroupView:
    id: UUID
    name: str
    member_user_ids: list[UUID]  # sorted
    required_approvals: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ApprovalRuleView:
    id: UUID
    name: str
    condition: Condition
    approval_group_id: UUID
    rule_group_id: UUID | None
    active: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ApprovalRuleGroupView:
    id: UUID
    name: str
    position: int
    rule_ids: list[UUID]  # sorted
    created_at: datetime
    updated_at: datetime
