"""Deal groups: named sets of opportunities, and the bounded lookup of an opportunity's groups."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from uuid import UUID

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import Conflict, invalid_field, not_found

from dps_api.db.models.opportunities import DealGroup, DealGroupMember, Opportunity
from dps_api.domain.commands import NOT_SENT, sent
from dps_api.domain.deal_group_commands import DealGroupChanges, NewDealGroup
from dps_api.domain.limits import MAX_GROUPS_PER_OPPORTUNITY
from dps_api.domain.opportunity_views import DealGroupView
from dps_api.services.opportunity_lookup import find_opportunity
from dps_api.services.outbox import Outbox


def _view(group: DealGroup, opportunity_ids: Collection[UUID]) -> DealGroupView:
    return DealGroupView(
        group.id, group.name, group.description, sorted(opportunity_ids), group.created_at, group.updated_at
    )


def _members_of(session: Session, group_ids: list[UUID]) -> dict[UUID, list[UUID]]:
    members: dict[UUID, list[UUID]] = defaultdict(list)
    if group_ids:
        rows = session.execute(
            select(DealGroupMember.deal_group_id, DealGroupMember.opportunity_id)
            .where(DealGroupMember.deal_group_id.in_(group_ids))
            .order_by(DealGroupMember.opportunity_id)
        )
        for group_id, opportunity_id in rows:
            members[group_id].append(opportunity_id)
    return members


def _find_group(session: Session, organization_id: UUID, group_id: UUID, *, lock: bool = False) -> DealGroup:
    stmt = select(DealGroup).where(DealGroup.id == group_id, DealGroup.organization_id == organization_id)
    group = session.scalar(stmt.with_for_update() if lock else stmt)
    if group is None:
        raise not_found("Deal group")
    return group


def _check_opportunities(session: Session, organization_id: UUID, wanted: Sequence[UUID]) -> None:
    """Every id must be a distinct opportunity of the organization. The rows are locked so two
    concurrent writers cannot both pass the per-opportunity group cap."""
    if len(set(wanted)) != len(wanted):
        raise invalid_field("opportunityIds", "must not repeat an opportunity")
    if not wanted:
        return
    found = set(
        session.scalars(
            select(Opportunity.id)
            .where(Opportunity.organization_id == organization_id, Opportunity.id.in_(wanted))
            .order_by(Opportunity.id)  # one lock order for every writer: no deadlocks
            .with_for_update()
        )
    )
    missing = [str(i) for i in wanted if i not in found]
    if missing:
        raise invalid_field("opportunityIds", f"not opportunities of this organization: {', '.join(missing[:10])}")


def _check_group_cap(session: Session, added: set[UUID]) -> None:
    if not added:
        return
    full = session.scalars(
        select(DealGroupMember.opportunity_id)
        .where(DealGroupMember.opportunity_id.in_(added))
        .group_by(DealGroupMember.opportunity_id)
        .having(func.count() >= MAX_GROUPS_PER_OPPORTUNITY)
        .order_by(DealGroupMember.opportunity_id)
    ).all()
    if full:
        raise Conflict(
            f"An opportunity belongs to at most {MAX_GROUPS_PER_OPPORTUNITY} deal groups; "
            f"already full: {', '.join(str(i) for i in full[:10])}.",
            code="deal_group_limit_reached",
        )


def _add_members(session: Session, group_id: UUID, opportunity_ids: set[UUID]) -> None:
    if opportunity_ids:
        session.execute(
            insert(DealGroupMember),
            [{"deal_group_id": group_id, "opportunity_id": i} for i in sorted(opportunity_ids)],
        )


class DealGroupService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def groups_of(self, principal: Principal, opportunity_id: UUID) -> list[DealGroupView]:
        """The deal groups an opportunity belongs to: at most MAX_GROUPS_PER_OPPORTUNITY, so unpaged."""
        org_id = principal.organization_id
        with self._tx.read() as session:
            find_opportunity(session, org_id, opportunity_id)  # unknown or another org's: 404
            groups = list(
                session.scalars(
                    select(DealGroup)
                    .join(DealGroupMember, DealGroupMember.deal_group_id == DealGroup.id)
                    .where(DealGroupMember.opportunity_id == opportunity_id, DealGroup.organization_id == org_id)
                    .order_by(DealGroup.id)
                )
            )
            members = _members_of(session, [g.id for g in groups])
            return [_view(g, members[g.id]) for g in groups]

    def get(self, principal: Principal, group_id: UUID) -> DealGroupView:
        with self._tx.read() as session:
            group = _find_group(session, principal.organization_id, group_id)
            return _view(group, _members_of(session, [group.id])[group.id])

    def create(self, principal: Principal, command: NewDealGroup) -> DealGroupView:
        org_id = principal.organization_id
        with self._tx() as session:
            _check_opportunities(session, org_id, command.opportunity_ids)
            _check_group_cap(session, set(command.opportunity_ids))
            now = self._now()
            group = DealGroup(
                organization_id=org_id,
                name=command.name,
                description=command.description,
                created_at=now,
                updated_at=now,
            )
            session.add(group)
            session.flush()
            _add_members(session, group.id, set(command.opportunity_ids))
            view = _view(group, command.opportunity_ids)
            self._outbox.record(session, view, org_id, now, "deal_group.created")
            return view

    def update(self, principal: Principal, group_id: UUID, command: DealGroupChanges) -> DealGroupView:
        org_id = principal.organization_id
        fields = sent(command)
        with self._tx() as session:
            group = _find_group(session, org_id, group_id, lock=True)
            current = set(_members_of(session, [group.id])[group.id])
            wanted = current
            if command.opportunity_ids is not NOT_SENT:
                _check_opportunities(session, org_id, command.opportunity_ids)
                wanted = set(command.opportunity_ids)
            changed = {f: fields[f] for f in ("name", "description") if f in fields and getattr(group, f) != fields[f]}
            if not changed and wanted == current:
                return _view(group, current)  # nothing changed: no write, no event
            _check_group_cap(session, wanted - current)
            if current - wanted:
                session.execute(
                    delete(DealGroupMember).where(
                        DealGroupMember.deal_group_id == group.id,
                        DealGroupMember.opportunity_id.in_(current - wanted),
                    )
                )
            _add_members(session, group.id, wanted - current)
            now = self._now()
            for field, value in changed.items():
                setattr(group, field, value)
            group.updated_at = now
            session.flush()
            view = _view(group, wanted)
            self._outbox.record(session, view, org_id, now, "deal_group.updated")
            return view
