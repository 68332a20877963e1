"""Request and response bodies of approval requests: ``/approvals`` and ``/pricing-quotes/{id}/approval``."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from dps_api.domain.approval_flow import Decision, RequestStatus, StepStatus
from dps_api.schemas.common import RequestModel, ResponseModel


class DecisionBody(RequestModel):
    """The body is optional: an empty request (no Content-Type, no body) means no comment."""

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
