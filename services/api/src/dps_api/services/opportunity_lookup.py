"""An opportunity's row found (and locked) inside a caller's transaction, or the 404 its absence
answers. Shared by the opportunity and deal group use cases. Nothing here commits."""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.errors import not_found

from dps_api.db.models.opportunities import Opportunity


def find_opportunity(
    session: Session, organization_id: UUID, opportunity_id: UUID, *, lock: bool = False
) -> Opportunity:
    stmt = select(Opportunity).where(Opportunity.id == opportunity_id, Opportunity.organization_id == organization_id)
    opp = session.scalar(stmt.with_for_update() if lock else stmt)
    if opp is None:
        raise not_found("Opportunity")
    return opp
