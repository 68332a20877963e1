"""What the approval configuration use cases are asked to do (approval groups, rules, rule groups):
plain values, no request bodies. Resources build them from request bodies; ``NOT_SENT`` leaves a
field as it is, ``None`` clears a nullable one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from dps_api.domain.approval_rules import Condition
from dps_api.domain.commands import NOT_SENT, Patch


@dataclass(frozen=True)
class NewApprovalGroup:
    name: str
    member_user_ids: Sequence[UUID]
    required_approvals: int


@dataclass(frozen=True)
class ApprovalGroupChanges:
    """A partial update; ``member_user_ids`` replaces the whole membership."""

    name: Patch[str] = NOT_SENT
    member_user_ids: Patch[Sequence[UUID]] = NOT_SENT
    required_approvals: Patch[int] = NOT_SENT


@dataclass(frozen=True)
class NewApprovalRule:
    name: str
    condition: Condition  # as sent: checked by the service (``make_condition``)
    approval_group_id: UUID
    rule_group_id: UUID | None = None
    active: bool = True


@dataclass(frozen=True)
class ApprovalRuleChanges:
    """A partial update; ``condition`` is replaced whole, ``rule_group_id`` None clears it."""

    name: Patch[str] = NOT_SENT
    condition: Patch[Condition] = NOT_SENT
    approval_group_id: Patch[UUID] = NOT_SENT
    rule_group_id: Patch[UUID | None] = NOT_SENT
    active: Patch[bool] = NOT_SENT


@dataclass(frozen=True)
class NewApprovalRuleGroup:
    name: str
    position: int


@dataclass(frozen=True)
class ApprovalRuleGroupChanges:
    name: Patch[str] = NOT_SENT
    position: Patch[int] = NOT_SENT
