"""Request and response bodies of the approval configuration: ``/approval-groups``,
``/approval-rules`` and ``/approval-rule-groups``."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import Field

from dps_api.domain.approval_rules import ConditionType
from dps_api.schemas.common import (
    CurrencyCode,
    DecimalString,
    Name,
    RequestModel,
    ResponseModel,
)

MAX_MEMBERS = 500
MAX_POSITION = 2_147_483_647

_MEMBERS_DOC = "Users of the organization, each at most once."
_REQUIRED_DOC = "Approvals needed from distinct members: 1 to the number of members."
_POSITION_DOC = "Steps run in ascending position; equal positions run in creation order."
_CONDITION_DOC = (
    "What trips the rule. Every comparison is strict: a quote exactly at the threshold does not fire it. "
    "MAX_DISCOUNT_PERCENT_ABOVE: the largest line discount in percent (threshold 0..100). "
    "TOTAL_CONTRACT_VALUE_ABOVE: the quote's total contract value, only for quotes in `currency` (required; "
    "threshold with at most the currency's minor units). TERM_MONTHS_ABOVE: the subscription term in whole months. "
    "LOCKED_PRICE_BELOW_LIST: a locked product negotiated below its list price (no threshold, no currency)."
)


# --- approval groups ---------------------------------------------------------------------------


class ApprovalGroupCreate(RequestModel):
    name: Name
    memberUserIds: list[UUID] = Field(min_length=1, max_length=MAX_MEMBERS, description=_MEMBERS_DOC)
    requiredApprovals: int = Field(ge=1, le=MAX_MEMBERS, description=_REQUIRED_DOC)


class ApprovalGroupUpdate(RequestModel):
    """Partial: only the fields sent change; null is refused for every field. ``memberUserIds`` replaces the
    whole membership. Pending approval requests keep the membership they were submitted with."""

    name: Name = Field(default=None)
    memberUserIds: list[UUID] = Field(default=None, min_length=1, max_length=MAX_MEMBERS, description=_MEMBERS_DOC)
    requiredApprovals: int = Field(default=None, ge=1, le=MAX_MEMBERS, description=_REQUIRED_DOC)


class ApprovalGroup(ResponseModel):
    id: str
    name: str
    memberUserIds: list[str] = Field(description="Sorted by user id.")
    requiredApprovals: int
    createdAt: datetime
    updatedAt: datetime


class ApprovalGroupList(ResponseModel):
    approvalGroups: list[ApprovalGroup]
    nextCursor: str | None


# --- approval rules ----------------------------------------------------------------------------


class ConditionBody(RequestModel):
    type: ConditionType
    threshold: DecimalString | None = Field(default=None, description="Required except for LOCKED_PRICE_BELOW_LIST.")
    currency: CurrencyCode | None = Field(
        default=None, description="TOTAL_CONTRACT_VALUE_ABOVE only, and required there."
    )


class ApprovalRuleCreate(RequestModel):
    name: Name
    condition: ConditionBody = Field(description=_CONDITION_DOC)
    approvalGroupId: UUID = Field(description="The approval group whose approval the rule requires.")
    ruleGroupId: UUID | None = Field(
        default=None, description="The step the rule belongs to; rules without one form the chain's final step."
    )
    active: bool = Field(default=True, description="Inactive rules are never evaluated.")


class ApprovalRuleUpdate(RequestModel):
    """Partial: only the fields sent change. ``condition`` is replaced whole; ``ruleGroupId`` is cleared by
    null; null is refused for the other fields. Pending approval requests keep the rules they snapshotted."""

    name: Name = Field(default=None)
    condition: ConditionBody = Field(default=None, description=_CONDITION_DOC)
    approvalGroupId: UUID = Field(default=None)
    ruleGroupId: UUID | None = None
    active: bool = Field(default=None)


class Condition(ResponseModel):
    type: ConditionType
    threshold: str | None = Field(description="Decimal string; null for LOCKED_PRICE_BELOW_LIST.")
    currency: str | None = Field(description="Set for TOTAL_CONTRACT_VALUE_ABOVE only.")


class ApprovalRule(ResponseModel):
    id: str
    name: str
    condition: Condition
    approvalGroupId: str
    ruleGroupId: str | None
    active: bool
    createdAt: datetime
    updatedAt: datetime


class ApprovalRuleList(ResponseModel):
    approvalRules: list[ApprovalRule]
    nextCursor: str | None


# --- approval rule groups ----------------------------------------------------------------------


class ApprovalRuleGroupCreate(RequestModel):
    name: Name
    position: int = Field(ge=0, le=MAX_POSITION, description=_POSITION_DOC)


class ApprovalRuleGroupUpdate(RequestModel):
    """Partial: only the fields sent change; null is refused."""

    name: Name = Field(default=None)
    position: int = Field(default=None, ge=0, le=MAX_POSITION, description=_POSITION_DOC)


class ApprovalRuleGroup(ResponseModel):
    id: str
    name: str
    position: int
    ruleIds: list[str] = Field(description="Read only: the rules (active or not) in this group, oldest first.")
    createdAt: datetime
    updatedAt: datetime


class ApprovalRuleGroupList(ResponseModel):
    approvalRuleGroups: list[ApprovalRuleGroup]
    nextCursor: str | None
