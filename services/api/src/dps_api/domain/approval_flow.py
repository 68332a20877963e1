"""The approval chain of one quote: steps built from the fired rules, and the state machine over them.

Steps: fired rules are grouped by their rule group; groups run in ascending ``position`` (ties by id),
and fired rules without a rule group form a final step. Within a step there is one requirement per
distinct approval group: ``required_approvals`` approvals from that group's members. Rules and group
membership are snapshotted when the chain is built, so later configuration edits never change it.

States: PENDING -> (every requirement of the current step met -> next step) -> APPROVED after the
last step; a rejection -> REJECTED; a recall -> RECALLED. Decided requests never change again.

Who may decide: never the quote's owner (``self_approval``); only a member of a group whose
requirement the CURRENT step still waits on (``not_an_approver``); one approval per user per step
(``already_approved``). One approval counts towards every unmet requirement of the step the user
is a member of. A user may approve again in a later step when they belong to that step's groups.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from uuid import UUID

from dps_common.errors import Conflict, Forbidden


class RequestStatus(StrEnum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    RECALLED = "RECALLED"


class StepStatus(StrEnum):
    WAITING = "WAITING"  # an earlier step is still open
    PENDING = "PENDING"  # the step the request waits on
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    RECALLED = "RECALLED"
    SKIPPED = "SKIPPED"  # never reached: the request was rejected or recalled before it


class Decision(StrEnum):
    APPROVE = "APPROVE"
    REJECT = "REJECT"
    RECALL = "RECALL"


@dataclass(frozen=True, slots=True)
class RuleRef:
    id: UUID
    name: str


@dataclass(frozen=True, slots=True)
class RuleGroupRef:
    id: UUID
    name: str
    position: int


@dataclass(frozen=True, slots=True)
class ApproverGroup:
    id: UUID
    name: str
    member_user_ids: frozenset[UUID]
    required_approvals: int


@dataclass(frozen=True, slots=True)
class FiredRule:
    id: UUID
    name: str
    approval_group_id: UUID
    rule_group: RuleGroupRef | None


@dataclass(frozen=True, slots=True)
class Vote:
    user_id: UUID
    at: datetime


@dataclass(frozen=True, slots=True)
class Requirement:
    approval_group_id: UUID
    approval_group_name: str
    required_approvals: int
    member_user_ids: tuple[UUID, ...]
    approvals: tuple[Vote, ...] = ()

    @property
    def met(self) -> bool:
        return len(self.approvals) >= self.required_approvals

    def waits_on(self, user_id: UUID) -> bool:
        return not self.met and user_id in self.member_user_ids


@dataclass(frozen=True, slots=True)
class Step:
    rule_group_id: UUID | None
    rule_group_name: str | None
    rules: tuple[RuleRef, ...]
    requirements: tuple[Requirement, ...]
    status: StepStatus = StepStatus.WAITING

    def approved_by(self, user_id: UUID) -> bool:
        return any(vote.user_id == user_id for r in self.requirements for vote in r.approvals)


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    user_id: UUID
    decision: Decision
    comment: str | None
    at: datetime
    step: int | None


@dataclass(frozen=True, slots=True)
class Flow:
    owner_user_id: UUID
    status: RequestStatus
    steps: tuple[Step, ...]
    current_step: int | None
    decisions: tuple[DecisionRecord, ...] = ()
    decided_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Approval:
    """The outcome of one approval: the new flow and, when it completed a step, that step's index."""

    flow: Flow
    completed_step: int | None


def build_steps(fired: Iterable[FiredRule], groups: Mapping[UUID, ApproverGroup]) -> tuple[Step, ...]:
    """The chain for these fired rules (in their given order within a step), every step WAITING."""
    grouped: dict[UUID, tuple[RuleGroupRef, list[FiredRule]]] = {}
    ungrouped: list[FiredRule] = []
    for rule in fired:
        if rule.rule_group is None:
            ungrouped.append(rule)
        else:
            grouped.setdefault(rule.rule_group.id, (rule.rule_group, []))[1].append(rule)
    ordered = sorted(grouped.values(), key=lambda entry: (entry[0].position, entry[0].id))
    steps = [_step(ref.id, ref.name, rules, groups) for ref, rules in ordered]
    if ungrouped:
        steps.append(_step(None, None, ungrouped, groups))
    return tuple(steps)


def _step(
    group_id: UUID | None, name: str | None, rules: list[FiredRule], groups: Mapping[UUID, ApproverGroup]
) -> Step:
    requirements: dict[UUID, Requirement] = {}
    for rule in rules:
        if rule.approval_group_id not in requirements:
            group = groups[rule.approval_group_id]
            requirements[group.id] = Requirement(
                group.id, group.name, group.required_approvals, tuple(sorted(group.member_user_ids))
            )
    return Step(group_id, name, tuple(RuleRef(r.id, r.name) for r in rules), tuple(requirements.values()))


def start(steps: tuple[Step, ...], owner_user_id: UUID, now: datetime) -> Flow:
    """A new request: approved at once when no step applies, else waiting on the first step.

    Refuses (409 ``approval_unsatisfiable``) a chain that could never complete because a group has
    fewer members other than the quote's owner than the approvals it requires.
    """
    for step in steps:
        for req in step.requirements:
            eligible = len(set(req.member_user_ids) - {owner_user_id})
            if eligible < req.required_approvals:
                raise Conflict(
                    f"Approval group '{req.approval_group_name}' requires {req.required_approvals} approvals but "
                    f"has only {eligible} members other than the quote's owner; change the group first.",
                    code="approval_unsatisfiable",
                )
    if not steps:
        return Flow(owner_user_id, RequestStatus.APPROVED, (), None, (), now)
    first = replace(steps[0], status=StepStatus.PENDING)
    return Flow(owner_user_id, RequestStatus.PENDING, (first, *steps[1:]), 0)


def _require_pending(flow: Flow) -> int:
    """The index of the step a pending request waits on; 409 once the request is decided."""
    if flow.status is not RequestStatus.PENDING:
        raise Conflict(f"This approval request is already {flow.status.value}.", code="approval_not_pending")
    if flow.current_step is None:  # start() never builds one: a pending request waits on a step
        raise ValueError("a pending approval request without a current step")
    return flow.current_step


def _refuse_owner(flow: Flow, user_id: UUID) -> None:
    if user_id == flow.owner_user_id:
        raise Forbidden("The quote's owner cannot decide on their own quote's approval.", code="self_approval")


def _waiting_requirements(step: Step, user_id: UUID) -> list[int]:
    """Indexes of the step's requirements that wait on ``user_id``; refuses everyone else."""
    waiting = [i for i, req in enumerate(step.requirements) if req.waits_on(user_id)]
    if not waiting:
        raise Forbidden(
            "Only members of an approval group the current step still waits on can decide.", code="not_an_approver"
        )
    return waiting


def approve(flow: Flow, user_id: UUID, now: datetime, comment: str | None = None) -> Approval:
    index = _require_pending(flow)
    _refuse_owner(flow, user_id)
    step = flow.steps[index]
    if step.approved_by(user_id):
        raise Conflict("You have already approved this step.", code="already_approved")
    waiting = _waiting_requirements(step, user_id)
    vote = Vote(user_id, now)
    requirements = tuple(
        replace(req, approvals=(*req.approvals, vote)) if i in waiting else req
        for i, req in enumerate(step.requirements)
    )
    step = replace(step, requirements=requirements)
    decisions = (*flow.decisions, DecisionRecord(user_id, Decision.APPROVE, comment, now, index))
    if not all(req.met for req in requirements):
        return Approval(replace(flow, steps=_with(flow.steps, index, step), decisions=decisions), None)
    steps = _with(flow.steps, index, replace(step, status=StepStatus.APPROVED))
    if index + 1 == len(steps):
        done = replace(
            flow, status=RequestStatus.APPROVED, steps=steps, current_step=None, decisions=decisions, decided_at=now
        )
        return Approval(done, index)
    steps = _with(steps, index + 1, replace(steps[index + 1], status=StepStatus.PENDING))
    return Approval(replace(flow, steps=steps, current_step=index + 1, decisions=decisions), index)


def reject(flow: Flow, user_id: UUID, now: datetime, comment: str | None = None) -> Flow:
    index = _require_pending(flow)
    _refuse_owner(flow, user_id)
    _waiting_requirements(flow.steps[index], user_id)
    record = DecisionRecord(user_id, Decision.REJECT, comment, now, index)
    return _close(flow, index, RequestStatus.REJECTED, StepStatus.REJECTED, record)


def recall(flow: Flow, user_id: UUID, now: datetime) -> Flow:
    """Withdrawn by the submitter side (who may do so is the caller's rule)."""
    index = _require_pending(flow)
    record = DecisionRecord(user_id, Decision.RECALL, None, now, index)
    return _close(flow, index, RequestStatus.RECALLED, StepStatus.RECALLED, record)


def _close(flow: Flow, index: int, status: RequestStatus, step_status: StepStatus, record: DecisionRecord) -> Flow:
    steps = tuple(
        replace(step, status=step_status if i == index else StepStatus.SKIPPED) if i >= index else step
        for i, step in enumerate(flow.steps)
    )
    decisions = (*flow.decisions, record)
    return replace(flow, status=status, steps=steps, current_step=None, decisions=decisions, decided_at=record.at)


def _with(steps: tuple[Step, ...], index: int, step: Step) -> tuple[Step, ...]:
    return (*steps[:index], step, *steps[index + 1 :])
