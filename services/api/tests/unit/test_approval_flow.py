"""The approval chain: step building from fired rules, and the state machine over the steps."""

from dataclasses import FrozenInstanceError
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import pytest

from dps_common.errors import Conflict, Forbidden

from dps_api.domain.approval_flow import (
    ApproverGroup,
    Decision,
    FiredRule,
    RequestStatus,
    RuleGroupRef,
    StepStatus,
    approve,
    build_steps,
    recall,
    reject,
    start,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
OWNER = UUID("00000000-0000-7000-8000-0000000000aa")


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def group(name: str, members: list[UUID], required: int = 1) -> ApproverGroup:
    return ApproverGroup(uuid4(), name, frozenset(members), required)


def rule(name: str, approvers: ApproverGroup, rule_group: RuleGroupRef | None = None) -> FiredRule:
    return FiredRule(uuid4(), name, approvers.id, rule_group)


def index(*groups: ApproverGroup) -> dict[UUID, ApproverGroup]:
    return {g.id: g for g in groups}


# --- step building ---------------------------------------------------------------------------


def test_steps_follow_rule_group_position_and_ungrouped_rules_come_last():
    managers, finance = group("Managers", [uuid4()]), group("Finance", [uuid4()])
    late = RuleGroupRef(uuid4(), "Finance review", 20)
    early = RuleGroupRef(uuid4(), "Manager review", 10)
    fired = [
        rule("no group", finance),
        rule("tcv", finance, late),
        rule("discount", managers, early),
    ]
    steps = build_steps(fired, index(managers, finance))
    assert [s.rule_group_name for s in steps] == ["Manager review", "Finance review", None]
    assert [s.rule_group_id for s in steps] == [early.id, late.id, None]
    assert [[r.name for r in s.rules] for s in steps] == [["discount"], ["tcv"], ["no group"]]
    assert all(s.status is StepStatus.WAITING for s in steps)


def test_equal_positions_are_ordered_by_rule_group_id():
    approvers = group("G", [uuid4()])
    first = RuleGroupRef(UUID("00000000-0000-7000-8000-000000000001"), "first", 5)
    second = RuleGroupRef(UUID("00000000-0000-7000-8000-000000000002"), "second", 5)
    steps = build_steps([rule("b", approvers, second), rule("a", approvers, first)], index(approvers))
    assert [s.rule_group_name for s in steps] == ["first", "second"]


def test_one_requirement_per_distinct_approval_group_within_a_step():
    a, b = uuid4(), uuid4()
    managers, finance = group("Managers", [b, a], required=2), group("Finance", [uuid4()])
    step_ref = RuleGroupRef(uuid4(), "Review", 1)
    fired = [rule("r1", managers, step_ref), rule("r2", finance, step_ref), rule("r3", managers, step_ref)]
    (step,) = build_steps(fired, index(managers, finance))
    assert [r.name for r in step.rules] == ["r1", "r2", "r3"]
    assert [(r.approval_group_name, r.required_approvals) for r in step.requirements] == [
        ("Managers", 2),
        ("Finance", 1),
    ]
    assert step.requirements[0].member_user_ids == tuple(sorted([a, b]))
    assert step.requirements[0].approvals == ()


def test_no_fired_rule_builds_no_step():
    assert build_steps([], {}) == ()


# --- start ------------------------------------------------------------------------------------


def test_no_step_means_approved_at_once():
    flow = start((), OWNER, T0)
    assert (flow.status, flow.current_step, flow.decided_at, flow.steps) == (RequestStatus.APPROVED, None, T0, ())


def test_start_waits_on_the_first_step():
    g = group("G", [uuid4()])
    flow = start(build_steps([rule("r", g, RuleGroupRef(uuid4(), "s1", 1)), rule("x", g)], index(g)), OWNER, T0)
    assert flow.status is RequestStatus.PENDING
    assert flow.current_step == 0
    assert [s.status for s in flow.steps] == [StepStatus.PENDING, StepStatus.WAITING]
    assert flow.decided_at is None


def test_a_group_the_owner_would_have_to_complete_is_refused_at_start():
    other = uuid4()
    g = group("Tiny", [OWNER, other], required=2)
    with pytest.raises(Conflict) as caught:
        start(build_steps([rule("r", g)], index(g)), OWNER, T0)
    assert caught.value.code == "approval_unsatisfiable"
    # the same group is fine for a quote someone else owns
    assert start(build_steps([rule("r", g)], index(g)), uuid4(), T0).status is RequestStatus.PENDING


# --- approving --------------------------------------------------------------------------------


def two_step_flow():
    m1, m2, f1 = uuid4(), uuid4(), uuid4()
    managers = group("Managers", [m1, m2], required=2)
    finance = group("Finance", [f1])
    s1, s2 = RuleGroupRef(uuid4(), "Managers step", 1), RuleGroupRef(uuid4(), "Finance step", 2)
    steps = build_steps([rule("discount", managers, s1), rule("tcv", finance, s2)], index(managers, finance))
    return start(steps, OWNER, T0), (m1, m2, f1)


def test_two_step_chain_moves_step_by_step_to_approved():
    flow, (m1, m2, f1) = two_step_flow()

    first = approve(flow, m1, at(1), "fine by me")
    assert first.completed_step is None
    assert first.flow.current_step == 0
    assert [v.user_id for v in first.flow.steps[0].requirements[0].approvals] == [m1]

    second = approve(first.flow, m2, at(2))
    assert second.completed_step == 0
    assert second.flow.status is RequestStatus.PENDING
    assert second.flow.current_step == 1
    assert [s.status for s in second.flow.steps] == [StepStatus.APPROVED, StepStatus.PENDING]

    last = approve(second.flow, f1, at(3))
    assert last.completed_step == 1
    assert last.flow.status is RequestStatus.APPROVED
    assert last.flow.current_step is None
    assert last.flow.decided_at == at(3)
    assert [s.status for s in last.flow.steps] == [StepStatus.APPROVED, StepStatus.APPROVED]
    history = [(d.user_id, d.decision, d.comment, d.at, d.step) for d in last.flow.decisions]
    assert history == [
        (m1, Decision.APPROVE, "fine by me", at(1), 0),
        (m2, Decision.APPROVE, None, at(2), 0),
        (f1, Decision.APPROVE, None, at(3), 1),
    ]


def test_transitions_never_mutate_the_previous_flow():
    flow, (m1, _, _) = two_step_flow()
    approve(flow, m1, at(1))
    assert flow.steps[0].requirements[0].approvals == ()
    assert flow.decisions == ()
    with pytest.raises(FrozenInstanceError):
        flow.status = RequestStatus.APPROVED


def test_the_owner_cannot_approve_or_reject_even_as_a_member():
    g = group("G", [OWNER, uuid4()], required=1)
    flow = start(build_steps([rule("r", g)], index(g)), OWNER, T0)
    for decide in (approve, reject):
        with pytest.raises(Forbidden) as caught:
            decide(flow, OWNER, at(1))
        assert caught.value.code == "self_approval"


def test_non_members_and_members_of_later_steps_are_not_approvers():
    flow, (_, _, f1) = two_step_flow()
    for user in (uuid4(), f1):  # a stranger; a member of the second step's group only
        for decide in (approve, reject):
            with pytest.raises(Forbidden) as caught:
                decide(flow, user, at(1))
            assert caught.value.code == "not_an_approver"


def test_a_user_cannot_approve_the_same_step_twice():
    flow, (m1, _, _) = two_step_flow()
    once = approve(flow, m1, at(1)).flow
    with pytest.raises(Conflict) as caught:
        approve(once, m1, at(2))
    assert caught.value.code == "already_approved"


def test_members_of_a_group_already_satisfied_are_no_longer_waited_on():
    a, b, c = uuid4(), uuid4(), uuid4()
    quick, slow = group("Quick", [a, b], required=1), group("Slow", [c])
    flow = start(build_steps([rule("r1", quick), rule("r2", slow)], index(quick, slow)), OWNER, T0)
    flow = approve(flow, a, at(1)).flow
    with pytest.raises(Forbidden) as caught:
        approve(flow, b, at(2))
    assert caught.value.code == "not_an_approver"
    done = approve(flow, c, at(3))
    assert done.flow.status is RequestStatus.APPROVED


def test_one_approval_counts_for_every_group_of_the_step_the_user_belongs_to():
    both = uuid4()
    g1, g2 = group("G1", [both, uuid4()]), group("G2", [both])
    flow = start(build_steps([rule("r1", g1), rule("r2", g2)], index(g1, g2)), OWNER, T0)
    result = approve(flow, both, at(1))
    assert result.flow.status is RequestStatus.APPROVED
    assert [len(r.approvals) for r in result.flow.steps[0].requirements] == [1, 1]


def test_a_member_of_two_steps_approves_each_step_once():
    both = uuid4()
    g1, g2 = group("G1", [both]), group("G2", [both])
    s1, s2 = RuleGroupRef(uuid4(), "one", 1), RuleGroupRef(uuid4(), "two", 2)
    flow = start(build_steps([rule("r1", g1, s1), rule("r2", g2, s2)], index(g1, g2)), OWNER, T0)
    flow = approve(flow, both, at(1)).flow
    assert flow.current_step == 1
    assert approve(flow, both, at(2)).flow.status is RequestStatus.APPROVED


# --- rejecting and recalling -----------------------------------------------------------------


def test_reject_closes_the_request_and_skips_later_steps():
    flow, (m1, m2, _) = two_step_flow()
    flow = approve(flow, m1, at(1)).flow
    rejected = reject(flow, m2, at(2), "too deep a discount")
    assert rejected.status is RequestStatus.REJECTED
    assert rejected.current_step is None
    assert rejected.decided_at == at(2)
    assert [s.status for s in rejected.steps] == [StepStatus.REJECTED, StepStatus.SKIPPED]
    assert rejected.decisions[-1].decision is Decision.REJECT
    assert rejected.decisions[-1].comment == "too deep a discount"


def test_reject_in_a_later_step_keeps_the_approved_steps():
    flow, (m1, m2, f1) = two_step_flow()
    flow = approve(approve(flow, m1, at(1)).flow, m2, at(2)).flow
    rejected = reject(flow, f1, at(3))
    assert [s.status for s in rejected.steps] == [StepStatus.APPROVED, StepStatus.REJECTED]


def test_recall_closes_a_pending_request():
    flow, _ = two_step_flow()
    recalled = recall(flow, OWNER, at(5))
    assert recalled.status is RequestStatus.RECALLED
    assert [s.status for s in recalled.steps] == [StepStatus.RECALLED, StepStatus.SKIPPED]
    assert (recalled.decisions[-1].user_id, recalled.decisions[-1].decision) == (OWNER, Decision.RECALL)
    assert recalled.decided_at == at(5)


@pytest.mark.parametrize("outcome", ["approved", "rejected", "recalled", "approved at once"])
def test_a_decided_request_refuses_every_further_transition(outcome):
    flow, (m1, m2, f1) = two_step_flow()
    if outcome == "approved":
        flow = approve(approve(approve(flow, m1, at(1)).flow, m2, at(2)).flow, f1, at(3)).flow
    elif outcome == "rejected":
        flow = reject(flow, m1, at(1))
    elif outcome == "recalled":
        flow = recall(flow, OWNER, at(1))
    else:
        flow = start((), OWNER, T0)
    for attempt in (
        lambda: approve(flow, m1, at(9)),
        lambda: reject(flow, f1, at(9)),
        lambda: recall(flow, OWNER, at(9)),
    ):
        with pytest.raises(Conflict) as caught:
            attempt()
        assert caught.value.code == "approval_not_pending"
