"""Approval configuration: approval groups, approval rules and approval rule groups (admin edits them).

Edits never touch approval requests already submitted: a request snapshots its rules and approver
groups. A rule group still referenced by rules cannot be deleted (409 ``rule_group_in_use``): move or
delete its rules first, so no rule silently changes step.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
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
from dps_api.domain.approval_rules import Condition, ConditionType, make_condition
from dps_api.schemas.approval_config import (
    ApprovalGroupCreate,
    ApprovalGroupUpdate,
    ApprovalRuleCreate,
    ApprovalRuleGroupCreate,
    ApprovalRuleGroupUpdate,
    ApprovalRuleUpdate,
    ConditionBody,
)
from dps_api.services.outbox import record_event


def _utc(moment: datetime | None) -> datetime | None:
    return moment.astimezone(UTC) if moment is not None else None


def rule_condition(rule: ApprovalRule) -> Condition:
    return Condition(ConditionType(rule.condition_type), rule.threshold, rule.currency)


def render_group(group: ApprovalGroup, member_ids: list[UUID]) -> dict[str, Any]:
    """The API's rendering of an approval group, also the snapshot its events carry."""
    return {
        "id": str(group.id),
        "name": group.name,
        "memberUserIds": [str(m) for m in sorted(member_ids)],
        "requiredApprovals": group.required_approvals,
        "createdAt": _utc(group.created_at),
        "updatedAt": _utc(group.updated_at),
    }


def render_rule(rule: ApprovalRule) -> dict[str, Any]:
    return {
        "id": str(rule.id),
        "name": rule.name,
        "condition": rule_condition(rule).render(),
        "approvalGroupId": str(rule.approval_group_id),
        "ruleGroupId": str(rule.rule_group_id) if rule.rule_group_id else None,
        "active": rule.active,
        "createdAt": _utc(rule.created_at),
        "updatedAt": _utc(rule.updated_at),
    }


def render_rule_group(group: ApprovalRuleGroup, rule_ids: list[UUID]) -> dict[str, Any]:
    return {
        "id": str(group.id),
        "name": group.name,
        "position": group.position,
        "ruleIds": [str(r) for r in sorted(rule_ids)],
        "createdAt": _utc(group.created_at),
        "updatedAt": _utc(group.updated_at),
    }


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
            found[group_id].append(rule_id)
    return found


def _find(session: Session, model, organization_id: UUID, object_id: UUID, what: str, *, lock: bool = False):
    stmt = select(model).where(model.id == object_id, model.organization_id == organization_id)
    row = session.scalar(stmt.with_for_update() if lock else stmt)
    if row is None:
        raise not_found(what)
    return row


def _check_members(session: Session, organization_id: UUID, member_ids: list[UUID], required: int) -> None:
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


def _check_reference(session: Session, model, organization_id: UUID, object_id: UUID, field: str, what: str) -> None:
    found = session.scalar(select(model.id).where(model.id == object_id, model.organization_id == organization_id))
    if found is None:
        raise invalid_field(field, f"must be an {what} of the organization")


def _condition(body: ConditionBody) -> Condition:
    threshold = Decimal(body.threshold) if body.threshold is not None else None
    return make_condition(body.type, threshold, body.currency)


class ApprovalConfigService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime]):
        self._tx = tx
        self._now = now

    # --- approval groups ---------------------------------------------------------------------

    def list_groups(self, principal: Principal, page: PageRequest) -> list[dict[str, Any]]:
        stmt = select(ApprovalGroup).where(ApprovalGroup.organization_id == principal.organization_id)
        with self._tx.read() as session:
            groups = list(session.scalars(keyset(stmt, [ApprovalGroup.id], page, convert=[UUID])))
            members = members_of(session, [g.id for g in groups])
            return [render_group(g, members[g.id]) for g in groups]

    def get_group(self, principal: Principal, group_id: UUID) -> dict[str, Any]:
        with self._tx.read() as session:
            group = _find(session, ApprovalGroup, principal.organization_id, group_id, "Approval group")
            return render_group(group, members_of(session, [group.id])[group.id])

    def create_group(self, principal: Principal, body: ApprovalGroupCreate) -> dict[str, Any]:
        org_id = principal.organization_id
        with self._tx() as session:
            _check_members(session, org_id, body.memberUserIds, body.requiredApprovals)
            now = self._now()
            group = ApprovalGroup(
                organization_id=org_id,
                name=body.name,
                required_approvals=body.requiredApprovals,
                created_at=now,
                updated_at=now,
            )
            session.add(group)
            session.flush()
            session.add_all(ApprovalGroupMember(approval_group_id=group.id, user_id=u) for u in body.memberUserIds)
            view = render_group(group, body.memberUserIds)
            record_event(session, "approval_group.created", org_id, view, now)
            return view

    def update_group(self, principal: Principal, group_id: UUID, body: ApprovalGroupUpdate) -> dict[str, Any]:
        org_id = principal.organization_id
        sent = body.model_fields_set
        with self._tx() as session:
            group = _find(session, ApprovalGroup, org_id, group_id, "Approval group", lock=True)
            members = members_of(session, [group.id])[group.id]
            new_members = body.memberUserIds if "memberUserIds" in sent else members
            required = body.requiredApprovals if "requiredApprovals" in sent else group.required_approvals
            name = body.name if "name" in sent else group.name
            if "memberUserIds" in sent or "requiredApprovals" in sent:
                _check_members(session, org_id, new_members, required)
            if (name, required, set(new_members)) == (group.name, group.required_approvals, set(members)):
                return render_group(group, members)  # nothing changed: no write, no event
            now = self._now()
            group.name, group.required_approvals, group.updated_at = name, required, now
            if set(new_members) != set(members):
                session.execute(delete(ApprovalGroupMember).where(ApprovalGroupMember.approval_group_id == group.id))
                session.add_all(ApprovalGroupMember(approval_group_id=group.id, user_id=u) for u in new_members)
            session.flush()
            view = render_group(group, new_members)
            record_event(session, "approval_group.updated", org_id, view, now)
            return view

    # --- approval rules ----------------------------------------------------------------------

    def list_rules(self, principal: Principal, page: PageRequest) -> list[dict[str, Any]]:
        stmt = select(ApprovalRule).where(ApprovalRule.organization_id == principal.organization_id)
        with self._tx.read() as session:
            return [render_rule(r) for r in session.scalars(keyset(stmt, [ApprovalRule.id], page, convert=[UUID]))]

    def get_rule(self, principal: Principal, rule_id: UUID) -> dict[str, Any]:
        with self._tx.read() as session:
            return render_rule(_find(session, ApprovalRule, principal.organization_id, rule_id, "Approval rule"))

    def create_rule(self, principal: Principal, body: ApprovalRuleCreate) -> dict[str, Any]:
        org_id = principal.organization_id
        condition = _condition(body.condition)
        with self._tx() as session:
            _check_reference(session, ApprovalGroup, org_id, body.approvalGroupId, "approvalGroupId", "approval group")
            if body.ruleGroupId is not None:
                _check_reference(
                    session, ApprovalRuleGroup, org_id, body.ruleGroupId, "ruleGroupId", "approval rule group"
                )
            now = self._now()
            rule = ApprovalRule(
                organization_id=org_id,
                name=body.name,
                condition_type=condition.type.value,
                threshold=condition.threshold,
                currency=condition.currency,
                approval_group_id=body.approvalGroupId,
                rule_group_id=body.ruleGroupId,
                active=body.active,
                created_at=now,
                updated_at=now,
            )
            session.add(rule)
            session.flush()
            view = render_rule(rule)
            record_event(session, "approval_rule.created", org_id, view, now)
            return view

    def update_rule(self, principal: Principal, rule_id: UUID, body: ApprovalRuleUpdate) -> dict[str, Any]:
        org_id = principal.organization_id
        sent = body.model_fields_set
        changes: dict[str, Any] = {f: getattr(body, f) for f in ("name", "active") if f in sent}
        if "condition" in sent:
            condition = _condition(body.condition)
            changes.update(
                condition_type=condition.type.value, threshold=condition.threshold, currency=condition.currency
            )
        if "approvalGroupId" in sent:
            changes["approval_group_id"] = body.approvalGroupId
        if "ruleGroupId" in sent:
            changes["rule_group_id"] = body.ruleGroupId
        with self._tx() as session:
            rule = _find(session, ApprovalRule, org_id, rule_id, "Approval rule", lock=True)
            changes = {column: value for column, value in changes.items() if getattr(rule, column) != value}
            if not changes:
                return render_rule(rule)
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
            view = render_rule(rule)
            record_event(session, "approval_rule.updated", org_id, view, now)
            return view

    def delete_rule(self, principal: Principal, rule_id: UUID) -> None:
        org_id = principal.organization_id
        with self._tx() as session:
            rule = _find(session, ApprovalRule, org_id, rule_id, "Approval rule", lock=True)
            view = render_rule(rule)
            session.delete(rule)
            record_event(session, "approval_rule.deleted", org_id, view, self._now())

    # --- approval rule groups ----------------------------------------------------------------

    def list_rule_groups(self, principal: Principal, page: PageRequest) -> list[dict[str, Any]]:
        stmt = select(ApprovalRuleGroup).where(ApprovalRuleGroup.organization_id == principal.organization_id)
        with self._tx.read() as session:
            groups = list(session.scalars(keyset(stmt, [ApprovalRuleGroup.id], page, convert=[UUID])))
            rules = _rules_of(session, [g.id for g in groups])
            return [render_rule_group(g, rules[g.id]) for g in groups]

    def get_rule_group(self, principal: Principal, group_id: UUID) -> dict[str, Any]:
        with self._tx.read() as session:
            group = _find(session, ApprovalRuleGroup, principal.organization_id, group_id, "Approval rule group")
            return render_rule_group(group, _rules_of(session, [group.id])[group.id])

    def create_rule_group(self, principal: Principal, body: ApprovalRuleGroupCreate) -> dict[str, Any]:
        org_id = principal.organization_id
        with self._tx() as session:
            now = self._now()
            group = ApprovalRuleGroup(
                organization_id=org_id, name=body.name, position=body.position, created_at=now, updated_at=now
            )
            session.add(group)
            session.flush()
            view = render_rule_group(group, [])
            record_event(session, "approval_rule_group.created", org_id, view, now)
            return view

    def update_rule_group(self, principal: Principal, group_id: UUID, body: ApprovalRuleGroupUpdate) -> dict[str, Any]:
        org_id = principal.organization_id
        with self._tx() as session:
            group = _find(session, ApprovalRuleGroup, org_id, group_id, "Approval rule group", lock=True)
            changes = {f: getattr(body, f) for f in ("name", "position") if f in body.model_fields_set}
            changes = {f: v for f, v in changes.items() if getattr(group, f) != v}
            rule_ids = _rules_of(session, [group.id])[group.id]
            if not changes:
                return render_rule_group(group, rule_ids)
            now = self._now()
            for column, value in changes.items():
                setattr(group, column, value)
            group.updated_at = now
            session.flush()
            view = render_rule_group(group, rule_ids)
            record_event(session, "approval_rule_group.updated", org_id, view, now)
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
            view = render_rule_group(group, [])
            session.delete(group)
            record_event(session, "approval_rule_group.deleted", org_id, view, self._now())
