"""Request and response bodies of the approval configuration: ``/approval-groups``,
``/approval-rules`` and ``/approval-rule-groups``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from pydantic import MISSING, Field

from dps_common.openapi.examples import DecimalText, example

from dps_api.domain import approval_rules
from dps_api.domain.approval_config_views import ApprovalGroupView, ApprovalRuleGroupView, ApprovalRuleView
from dps_api.domain.approval_rules import ConditionType
from dps_api.domain.money import format_amount, format_decimal
from dps_api.schemas.common import (
    UNSENT,
    CurrencyCode,
    DecimalString,
    Name,
    RequestModel,
    ResponseModel,
    unsent,
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
    model_config = example({"name": "Finance approvers", "memberUserIds": ["0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b"], "requiredApprovals": 1})
    name: Name
    memberUserIds: list[UUID] = Field(min_length=1, max_length=MAX_MEMBERS, description=_MEMBERS_DOC)
    requiredApprovals: int = Field(ge=1, le=MAX_MEMBERS, description=_REQUIRED_DOC)


class ApprovalGroupUpdate(RequestModel):
    """Partial: only the fields sent change; null is refused for every field. ``memberUserIds`` replaces the
    whole membership. Pending approval requests keep the membership they were submitted with."""
    model_config = example({"requiredApprovals": 2})

    name: Name | MISSING = UNSENT
    memberUserIds: list[UUID] | MISSING = unsent(min_length=1, max_length=MAX_MEMBERS, description=_MEMBERS_DOC)
    requiredApprovals: int | MISSING = unsent(ge=1, le=MAX_MEMBERS, description=_REQUIRED_DOC)


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


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def render_approval_group(group: ApprovalGroupView) -> dict[str, Any]:
    """An approval group as the API shows it (``ApprovalGroup``), also the snapshot its events carry."""
    return {
        "id": str(group.id),
        "name": group.name,
        "memberUserIds": [str(m) for m in group.member_user_ids],
        "requiredApprovals": group.required_approvals,
        "createdAt": _utc(group.created_at),
        "updatedAt": _utc(group.updated_at),
    }


# --- approval rules ----------------------------------------------------------------------------


class ConditionBody(RequestModel):
    type: ConditionType
    threshold: DecimalString | None = Field(default=None, description="Required except for LOCKED_PRICE_BELOW_LIST.")
    currency: CurrencyCode | None = Field(
        default=None, description="TOTAL_CONTRACT_VALUE_ABOVE only, and required there."
    )


class ApprovalRuleCreate(RequestModel):
    model_config = example({"name": "Discounts over 20%", "condition": {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "20"}, "approvalGroupId": "0192a3b4-c5d6-7e8f-9a0b-3c2d3e4f5a6b", "ruleGroupId": None, "active": True})
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
    model_config = example({"condition": {"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "100000.00", "currency": "USD"}})

    name: Name | MISSING = UNSENT
    condition: ConditionBody | MISSING = unsent(description=_CONDITION_DOC)
    approvalGroupId: UUID | MISSING = UNSENT
    ruleGroupId: UUID | None | MISSING = UNSENT
    active: bool | MISSING = UNSENT


class Condition(ResponseModel):
    type: ConditionType
    threshold: DecimalText | None = Field(description="Decimal string; null for LOCKED_PRICE_BELOW_LIST.")
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


def render_condition(condition: approval_rules.Condition) -> dict[str, str | None]:
    """A rule's condition: thresholds as decimal strings, money with its currency's minor units."""
    threshold = None
    if condition.threshold is not None:
        if condition.type is ConditionType.TOTAL_CONTRACT_VALUE_ABOVE and condition.currency:
            threshold = format_amount(condition.currency, condition.threshold)
        else:
            threshold = format_decimal(condition.threshold)
    return {"type": condition.type.value, "threshold": threshold, "currency": condition.currency}


def render_approval_rule(rule: ApprovalRuleView) -> dict[str, Any]:
    """An approval rule as the API shows it (``ApprovalRule``), also the snapshot its events carry."""
    return {
        "id": str(rule.id),
        "name": rule.name,
        "condition": render_condition(rule.condition),
        "approvalGroupId": str(rule.approval_group_id),
        "ruleGroupId": str(rule.rule_group_id) if rule.rule_group_id else None,
        "active": rule.active,
        "createdAt": _utc(rule.created_at),
        "updatedAt": _utc(rule.updated_at),
    }


# --- approval rule groups ----------------------------------------------------------------------


class ApprovalRuleGroupCreate(RequestModel):
    model_config = example({"name": "Finance review", "position": 1})
    name: Name
    position: int = Field(ge=0, le=MAX_POSITION, description=_POSITION_DOC)


class ApprovalRuleGroupUpdate(RequestModel):
    """Partial: only the fields sent change; null is refused."""
    model_config = example({"position": 2})

    name: Name | MISSING = UNSENT
    position: int | MISSING = unsent(ge=0, le=MAX_POSITION, description=_POSITION_DOC)


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


def render_approval_rule_group(group: ApprovalRuleGroupView) -> dict[str, Any]:
    """A rule group as the API shows it (``ApprovalRuleGroup``), also the snapshot its events carry."""
    return {
        "id": str(group.id),
        "name": group.name,
        "position": group.position,
        "ruleIds": [str(r) for r in group.rule_ids],
        "createdAt": _utc(group.created_at),
        "updatedAt": _utc(group.updated_at),
    }
