"""Approval configuration: approval groups, approval rules and approval rule groups (admin edits them).

Edits never touch approval requests already submitted: a request snapshots its rules and approver
groups. A rule group still referenced by rules cannot be deleted (409 ``rule_group_in_use``): move or
delete its rules first, so no rule silently changes step.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import Conflict, invalid_field, not_found
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.approvals import (
    ApprovalGroup,
    ApprovalGroupMember,
    ApprovalRule,
    ApprovalRuleGroup,
)
from dps_api.db.models.identity import User
from dps_api.domain.approval_config_commands import (
    ApprovalGroupChanges,
    ApprovalRuleChanges,
    ApprovalRuleGroupChanges,
    NewApprovalGroup,
    NewApprovalRule,
    NewApprovalRuleGroup,
)
from dps_api.domain.approval_config_views import ApprovalGroupView, ApprovalRuleGroupView, ApprovalRuleView
from dps_api.domain.approval_rules import Condition, ConditionType, make_condition
from dps_api.domain.commands import NOT_SENT, sent
from dps_api.services.outbox import Outbox

_Model = TypeVar("_Model", ApprovalGroup, ApprovalRule, ApprovalRuleGroup)


def rule_condition(rule: ApprovalRule) -> Condition:
    return Condition(ConditionType(rule.condition_type), rule.threshold, rule.currency)


def _group_view(group: ApprovalGroup, member_ids: Collection[UUID]) -> ApprovalGroupView:
    return ApprovalGroupView(
        group.id, group.name, sorted(member_ids), group.required_approvals, group.created_at, group.updated_at
    )


def _rule_view(rule: ApprovalRule) -> ApprovalRuleView:
    condition = rule_condition(rule)
    return ApprovalRuleView(
        rule.id, rule.name, condition, rule.approval_group_id, rule.rule_group_id, rule.active, rule.created_at, rule.updated_at
    )


def _rule_group_view(group: ApprovalRuleGroup, rule_ids: Collection[UUID]) -> ApprovalRuleGroupView:
    return ApprovalRuleGroupView(group.id, group.name, group.position, sorted(rule_ids), group.created_at, group.updated_at)


def members_of(session: Session, group_ids: list[UUID]) -> dict[UUID, list[UUID]]:
    found: dict[UUID, list[UUID]] = {g: [] for g in group_ids}
    if group_ids:
        stmt = select(ApprovalGroupMember).where(ApprovalGroupMember.approval_group_id.in_(group_ids))
        for row in session.scalars(stmt):
            found[row.approval_group_id].append(row.user_id)
    return found


def _rules_of(session: Session, rule_group_ids: list[UUID]) -> dict[UUID, list[UUID]]:
    found: dict[UUID, list[UUID]] = {g: [] for g in rule_group_ids}
    if rule_group_ids:
        stmt = select(ApprovalRule.rule_group_id, ApprovalRule.id).where(ApprovalRule.rule_group_id.in_(rule_group_ids))
        for group_id, rule_id in session.execute(stmt):
            if group_id is not None:  # always: the query selects rules of these groups
                found[group_id].append(rule_id)
    return found


def _find(
    session: Session, model: type[_Model], organization_id: UUID, object_id: UUID, what: str, *, lock: bool = False
) -> _Model:
    stmt = select(model).where(model.id == object_id, model.organization_id == organization_id)
    row = session.scalar(stmt.with_for_update() if lock else stmt)
    if row is None:
        raise not_found(what)
    return row


def _check_members(session: Session, organization_id: UUID, member_ids: Sequence[UUID], required: int) -> None:
    seen: set[UUID] = set()
    for i, user_id in enumerate(member_ids):
        if user_id in seen:
            raise invalid_field(f"memberUserIds[{i}]", "lists a user twice")
        seen.add(user_id)
    known = set(session.scalars(select(User.id).where(User.organization_id == organization_id, User.id.in_(seen))))
    for i, user_id in enumerate(member_ids):
        if user_id not in known:
            raise invalid_field(f"memberUserIds[{i}]", "must be a user of the organization")
    if required > len(member_ids):
        raise invalid_field("requiredApprovals", f"must be between 1 and the number of members ({len(member_ids)})")


def _check_reference(
    session: Session,
    model: type[ApprovalGroup] | type[ApprovalRuleGroup],
    organization_id: UUID,
    object_id: UUID,
    field: str,
    what: str,
) -> None:
    found = session.scalar(select(model.id).where(model.id == object_id, model.organization_id == organization_id))
    if found is None:
        raise invalid_field(field, f"must be an {what} of the organization")


def _checked(condition: Condition) -> Condition:
    return make_condition(condition.type, condition.threshold, condition.currency)


class ApprovalConfigService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    # --- approval groups ---------------------------------------------------------------------

    def list_groups(self, principal: Principal, page: PageRequest) -> list[ApprovalGroupView]:
        stmt = select(ApprovalGroup).where(ApprovalGroup.organization_id == principal.organization_id)
        with self._tx.read() as session:
            groups = list(session.scalars(keyset(stmt, [ApprovalGroup.id], page, convert=[UUID])))
            members = members_of(session, [g.id for g in groups])
            return [_group_view(g, members[g.id]) for g in groups]

    def get_group(self, principal: Principal, group_id: UUID) -> ApprovalGroupView:
        with self._tx.read() as session:
            group = _find(session, ApprovalGroup, principal.organization_id, group_id, "Approval group")
            return _group_view(group, members_of(session, [group.id])[group.id])

    def create_group(self, principal: Principal, command: NewApprovalGroup) -> ApprovalGroupView:
        org_id = principal.organization_id
        with self._tx() as session:
            _check_members(session, org_id, command.member_user_ids, command.required_approvals)
            now = self._now()
            group = ApprovalGroup(
                organization_id=org_id,
                name=command.name,
                required_approvals=command.required_approvals,
                created_at=now,
                updated_at=now,
            )
            session.add(group)
            session.flush()
            session.add_all(ApprovalGroupMember(approval_group_id=group.id, user_id=u) for u in command.member_user_ids)
            view = _group_view(group, command.member_user_ids)
            self._outbox.record(session, view, org_id, now, "approval_group.created")
            return view

    def update_group(self, principal: Principal, group_id: UUID, command: ApprovalGroupChanges) -> ApprovalGroupView:
        org_id = principal.organization_id
        with self._tx() as session:
            group = _find(session, ApprovalGroup, org_id, group_id, "Approval group", lock=True)
            members = members_of(session, [group.id])[group.id]
            new_members = members if command.member_user_ids is NOT_SENT else command.member_user_ids
            required = group.required_approvals if command.required_approvals is NOT_SENT else command.required_approvals
            name = group.name if command.name is NOT_SENT else command.name
            if command.member_user_ids is not NOT_SENT or command.required_approvals is not NOT_SENT:
                _check_members(session, org_id, new_members, required)
            if (name, required, set(new_members)) == (group.name, group.required_approvals, set(members)):
                return _group_view(group, members)  # nothing changed: no write, no event
            now = self._now()
            group.name, group.required_approvals, group.updated_at = name, required, now
            if set(new_members) != set(members):
                session.execute(delete(ApprovalGroupMember).where(ApprovalGroupMember.approval_group_id == group.id))
                session.add_all(ApprovalGroupMember(approval_group_id=group.id, user_id=u) for u in new_members)
            session.flush()
            view = _group_view(group, new_members)
            self._outbox.record(session, view, org_id, now, "approval_group.updated")
            return view

    # --- approval rules ----------------------------------------------------------------------

    def list_rules(self, principal: Principal, page: PageRequest) -> list[ApprovalRuleView]:
        stmt = select(ApprovalRule).where(ApprovalRule.organization_id == principal.organization_id)
        with self._tx.read() as session:
            return [_rule_view(r) for r in session.scalars(keyset(stmt, [ApprovalRule.id], page, convert=[UUID]))]

    def get_rule(self, principal: Principal, rule_id: UUID) -> ApprovalRuleView:
        with self._tx.read() as session:
            return _rule_view(_find(session, ApprovalRule, principal.organization_id, rule_id, "Approval rule"))

    def create_rule(self, principal: Principal, command: NewApprovalRule) -> ApprovalRuleView:
        org_id = principal.organization_id
        condition = _checked(command.condition)
        with self._tx() as session:
            _check_reference(session, ApprovalGroup, org_id, command.approval_group_id, "approvalGroupId", "approval group")
            if command.rule_group_id is not None:
                _check_reference(
                    session, ApprovalRuleGroup, org_id, command.rule_group_id, "ruleGroupId", "approval rule group"
                )
            now = self._now()
            rule = ApprovalRule(
                organization_id=org_id,
                name=command.name,
                condition_type=condition.type.value,
                threshold=condition.threshold,
                currency=condition.currency,
                approval_group_id=command.approval_group_id,
                rule_group_id=command.rule_group_id,
                active=command.active,
                created_at=now,
                updated_at=now,
            )
            session.add(rule)
            session.flush()
            view = _rule_view(rule)
            self._outbox.record(session, view, org_id, now, "approval_rule.created")
            return view

    def update_rule(self, principal: Principal, rule_id: UUID, command: ApprovalRuleChanges) -> ApprovalRuleView:
        org_id = principal.organization_id
        changes: dict[str, Any] = sent(command)
        if command.condition is not NOT_SENT:
            condition = _checked(changes.pop("condition"))
            changes.update(
                condition_type=condition.type.value, threshold=condition.threshold, currency=condition.currency
            )
        with self._tx() as session:
            rule = _find(session, ApprovalRule, org_id, rule_id, "Approval rule", lock=True)
            changes = {column: value for column, value in changes.items() if getattr(rule, column) != value}
            if not changes:
                return _rule_view(rule)
            if "approval_group_id" in changes:
                _check_reference(
                    session, ApprovalGroup, org_id, changes["approval_group_id"], "approvalGroupId", "approval group"
                )
            if changes.get("rule_group_id") is not None:
                _check_reference(
                    session, ApprovalRuleGroup, org_id, changes["rule_group_id"], "ruleGroupId", "approval rule group"
                )
            now = self._now()
            for column, value in changes.items():
                setattr(rule, column, value)
            rule.updated_at = now
            session.flush()
            view = _rule_view(rule)
            self._outbox.record(session, view, org_id, now, "approval_rule.updated")
            return view

    def delete_rule(self, principal: Principal, rule_id: UUID) -> None:
        org_id = principal.organization_id
        with self._tx() as session:
            rule = _find(session, ApprovalRule, org_id, rule_id, "Approval rule", lock=True)
            snapshot = _rule_view(rule)
            session.delete(rule)
            self._outbox.record(session, snapshot, org_id, self._now(), "approval_rule.deleted")

    # --- approval rule groups ----------------------------------------------------------------

    def list_rule_groups(self, principal: Principal, page: PageRequest) -> list[ApprovalRuleGroupView]:
        stmt = select(ApprovalRuleGroup).where(ApprovalRuleGroup.organization_id == principal.organization_id)
        with self._tx.read() as session:
            groups = list(session.scalars(keyset(stmt, [ApprovalRuleGroup.id], page, convert=[UUID])))
            rules = _rules_of(session, [g.id for g in groups])
            return [_rule_group_view(g, rules[g.id]) for g in groups]

    def get_rule_group(self, principal: Principal, group_id: UUID) -> ApprovalRuleGroupView:
        with self._tx.read() as session:
            group = _find(session, ApprovalRuleGroup, principal.organization_id, group_id, "Approval rule group")
            return _rule_group_view(group, _rules_of(session, [group.id])[group.id])

    def create_rule_group(self, principal: Principal, command: NewApprovalRuleGroup) -> ApprovalRuleGroupView:
        org_id = principal.organization_id
        with self._tx() as session:
            now = self._now()
            group = ApprovalRuleGroup(
                organization_id=org_id, name=command.name, position=command.position, created_at=now, updated_at=now
            )
            session.add(group)
            session.flush()
            view = _rule_group_view(group, [])
            self._outbox.record(session, view, org_id, now, "approval_rule_group.created")
            return view

    def update_rule_group(
        self, principal: Principal, group_id: UUID, command: ApprovalRuleGroupChanges
    ) -> ApprovalRuleGroupView:
        org_id = principal.organization_id
        with self._tx() as session:
            group = _find(session, ApprovalRuleGroup, org_id, group_id, "Approval rule group", lock=True)
            changes = {f: v for f, v in sent(command).items() if getattr(group, f) != v}
            rule_ids = _rules_of(session, [group.id])[group.id]
            if not changes:
                return _rule_group_view(group, rule_ids)
            now = self._now()
            for column, value in changes.items():
                setattr(group, column, value)
            group.updated_at = now
            session.flush()
            view = _rule_group_view(group, rule_ids)
            self._outbox.record(session, view, org_id, now, "approval_rule_group.updated")
            return view

    def delete_rule_group(self, principal: Principal, group_id: UUID) -> None:
        org_id = principal.organization_id
        with self._tx() as session:
            group = _find(session, ApprovalRuleGroup, org_id, group_id, "Approval rule group", lock=True)
            rule_ids = _rules_of(session, [group.id])[group.id]
            if rule_ids:
                raise Conflict(
                    f"{len(rule_ids)} approval rule(s) still belong to this rule group; move or delete them first.",
                    code="rule_group_in_use",
                    extra={"ruleIds": [str(r) for r in sorted(rule_ids)]},
                )
            snapshot = _rule_group_view(group, [])
            session.delete(group)
            self._outbox.record(session, snapshot, org_id, self._now(), "approval_rule_group.deleted")
