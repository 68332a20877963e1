"""Request and response bodies of approval requests: ``/approvals`` and ``/pricing-quotes/{id}/approval``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from dps_common.openapi.examples import example

from dps_api.domain.approval_flow import Decision, DecisionRecord, RequestStatus, Step, StepStatus
from dps_api.domain.approval_requests import ApprovalRequestView
from dps_api.schemas.common import RequestModel, ResponseModel


class DecisionBody(RequestModel):
    """The body is optional: an empty request (no Content-Type, no body) means no comment."""
    model_config = example({"comment": "Approved for the renewal; discount within this quarter's policy."})

    # PostgreSQL JSON cannot hold NUL: refused as a 400 rather than failing at the database
    comment: str | None = Field(
        default=None, max_length=2000, pattern=r"^[^\x00]*$", description="Shown in the decision history."
    )


class ApprovalVote(ResponseModel):
    userId: str
    at: datetime


class ApprovalRequirement(ResponseModel):
    approvalGroupId: str
    approvalGroupName: str
    requiredApprovals: int
    memberUserIds: list[str] = Field(description="The group's members when the quote was submitted.")
    approvals: list[ApprovalVote]
    met: bool


class ApprovalRuleRef(ResponseModel):
    id: str
    name: str


class ApprovalStep(ResponseModel):
    ruleGroupId: str | None = Field(description="Null for the final step of rules without a rule group.")
    ruleGroupName: str | None
    status: StepStatus = Field(
        description="WAITING (an earlier step is open), PENDING (the step the request waits on), APPROVED, "
        "REJECTED, RECALLED, or SKIPPED (never reached)."
    )
    rules: list[ApprovalRuleRef] = Field(description="The fired rules, as they were when the quote was submitted.")
    requirements: list[ApprovalRequirement] = Field(description="One per distinct approval group of the step.")


class ApprovalDecision(ResponseModel):
    userId: str
    decision: Decision
    comment: str | None
    at: datetime
    step: int | None = Field(description="Index of the step decided on.")


class ApprovalRequest(ResponseModel):
    id: str
    quoteId: str
    quoteOwnerUserId: str
    requestedByUserId: str
    status: RequestStatus
    currentStep: int | None = Field(description="Index into steps of the step waited on; null once decided.")
    steps: list[ApprovalStep] = Field(description="The approval chain, in order; empty when no rule fired.")
    decisions: list[ApprovalDecision] = Field(description="Approvals, the rejection and the recall, oldest first.")
    createdAt: datetime
    updatedAt: datetime
    decidedAt: datetime | None


class ApprovalRequestList(ResponseModel):
    approvals: list[ApprovalRequest]
    nextCursor: str | None


# --- rendering: the one place an approval request becomes JSON (responses and the approval.* events) ---


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def render_step(step: Step) -> dict[str, Any]:
    """An ``ApprovalStep``."""
    return {
        "ruleGroupId": None if step.rule_group_id is None else str(step.rule_group_id),
        "ruleGroupName": step.rule_group_name,
        "status": step.status,
        "rules": [{"id": str(rule.id), "name": rule.name} for rule in step.rules],
        "requirements": [
            {
                "approvalGroupId": str(req.approval_group_id),
                "approvalGroupName": req.approval_group_name,
                "requiredApprovals": req.required_approvals,
                "memberUserIds": [str(member) for member in req.member_user_ids],
                "approvals": [{"userId": str(vote.user_id), "at": _utc(vote.at)} for vote in req.approvals],
                "met": req.met,
            }
            for req in step.requirements
        ],
    }


def render_decision(record: DecisionRecord) -> dict[str, Any]:
    """An ``ApprovalDecision``."""
    return {
        "userId": str(record.user_id),
        "decision": record.decision,
        "comment": record.comment,
        "at": _utc(record.at),
        "step": record.step,
    }


def render_approval(request: ApprovalRequestView) -> dict[str, Any]:
    """An ``ApprovalRequest``."""
    flow = request.flow
    return {
        "id": str(request.id),
        "quoteId": str(request.quote_id),
        "quoteOwnerUserId": str(flow.owner_user_id),
        "requestedByUserId": str(request.requested_by_user_id),
        "status": flow.status,
        "currentStep": flow.current_step,
        "steps": [render_step(step) for step in flow.steps],
        "decisions": [render_decision(record) for record in flow.decisions],
        "createdAt": _utc(request.created_at),
        "updatedAt": _utc(request.updated_at),
        "decidedAt": None if flow.decided_at is None else _utc(flow.decided_at),
    }
