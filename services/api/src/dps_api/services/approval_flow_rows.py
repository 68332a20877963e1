"""Approval request rows <-> the domain's flow.

A request stores its chain (steps with their rules, approver groups and votes) and its decision
history as JSON in the shape the API renders them (``dps_api.schemas.approvals``), snapshotted at
submission. Nothing here commits.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from dps_api.db.models.approvals import ApprovalRequest
from dps_api.domain.approval_flow import (
    Decision,
    DecisionRecord,
    Flow,
    Requirement,
    RuleRef,
    Step,
    StepStatus,
    Vote,
)
from dps_api.domain.approval_requests import ApprovalRequestView


def _at(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _uuid(raw: str | None) -> UUID | None:
    return UUID(raw) if raw is not None else None


def _step_json(step: Step) -> dict[str, Any]:
    return {
        "ruleGroupId": str(step.rule_group_id) if step.rule_group_id else None,
        "ruleGroupName": step.rule_group_name,
        "status": step.status.value,
        "rules": [{"id": str(r.id), "name": r.name} for r in step.rules],
        "requirements": [
            {
                "approvalGroupId": str(req.approval_group_id),
                "approvalGroupName": req.approval_group_name,
                "requiredApprovals": req.required_approvals,
                "memberUserIds": [str(m) for m in req.member_user_ids],
                "approvals": [{"userId": str(v.user_id), "at": _at(v.at)} for v in req.approvals],
                "met": req.met,
            }
            for req in step.requirements
        ],
    }


def _step_of(raw: dict[str, Any]) -> Step:
    requirements = tuple(
        Requirement(
            UUID(req["approvalGroupId"]),
            req["approvalGroupName"],
            req["requiredApprovals"],
            tuple(UUID(m) for m in req["memberUserIds"]),
            tuple(Vote(UUID(v["userId"]), datetime.fromisoformat(v["at"])) for v in req["approvals"]),
        )
        for req in raw["requirements"]
    )
    rules = tuple(RuleRef(UUID(r["id"]), r["name"]) for r in raw["rules"])
    return Step(_uuid(raw["ruleGroupId"]), raw["ruleGroupName"], rules, requirements, StepStatus(raw["status"]))


def _decision_json(record: DecisionRecord) -> dict[str, Any]:
    return {
        "userId": str(record.user_id),
        "decision": record.decision.value,
        "comment": record.comment,
        "at": _at(record.at),
        "step": record.step,
    }


def _decision_of(raw: dict[str, Any]) -> DecisionRecord:
    at = datetime.fromisoformat(raw["at"])
    return DecisionRecord(UUID(raw["userId"]), Decision(raw["decision"]), raw["comment"], at, raw["step"])


def flow_of(request: ApprovalRequest) -> Flow:
    return Flow(
        owner_user_id=request.quote_owner_user_id,
        status=request.status,
        steps=tuple(_step_of(s) for s in request.steps),
        current_step=request.current_step,
        decisions=tuple(_decision_of(d) for d in request.decisions),
        decided_at=request.decided_at,
    )


def apply_flow(request: ApprovalRequest, flow: Flow, now: datetime) -> None:
    request.status = flow.status
    request.current_step = flow.current_step
    request.steps = [_step_json(s) for s in flow.steps]
    request.decisions = [_decision_json(d) for d in flow.decisions]
    request.decided_at = flow.decided_at
    request.updated_at = now


def request_view(request: ApprovalRequest) -> ApprovalRequestView:
    return ApprovalRequestView(
        id=request.id,
        quote_id=request.quote_id,
        requested_by_user_id=request.requested_by_user_id,
        flow=flow_of(request),
        created_at=request.created_at,
        updated_at=request.updated_at,
    )
