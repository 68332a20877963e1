"""Opportunities and deal groups as their use cases return them: plain values, no rows, no JSON.

``dps_api.schemas.opportunities`` and ``dps_api.schemas.deal_groups`` render them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from uuid import UUID

from dps_api.domain.vocabulary import OpportunityStage


@dataclass(frozen=True)
class OpportunityView:
    id: UUID
    crm_id: str | None
    name: str
    account_name: str
    owner_user_id: UUID
    stage: OpportunityStage
    amount: Decimal | None
    currency: str | None
    close_date: date | None
    closed_won_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class DealGroupView:
    id: UUID
    name: str
    description: str | None
    opportunity_ids: list[UUID]  # sorted
    created_at: datetime
    updated_at: datetime
