"""Request and response bodies of ``/deal-groups``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any
from uuid import UUID

from pydantic import MISSING, Field, StringConstraints

from dps_common.openapi.examples import example

from dps_api.domain.limits import MAX_GROUPS_PER_OPPORTUNITY, MAX_OPPORTUNITIES_PER_GROUP
from dps_api.domain.opportunity_views import DealGroupView
from dps_api.schemas.common import UNSENT, Name, RequestModel, ResponseModel

Description = Annotated[str, StringConstraints(max_length=2000)]
OpportunityIds = Annotated[
    list[UUID],
    Field(
        max_length=MAX_OPPORTUNITIES_PER_GROUP,
        json_schema_extra={"uniqueItems": True},  # repeats are refused with 400
        description=(
            f"Opportunities of the organization, each at most once (up to {MAX_OPPORTUNITIES_PER_GROUP}). "
            f"An opportunity belongs to at most {MAX_GROUPS_PER_OPPORTUNITY} deal groups."
        ),
    ),
]


class DealGroupCreate(RequestModel):
    model_config = example({"name": "Initech renewals", "description": "Every Initech renewal this year.", "opportunityIds": ["0192a3b4-c5d6-7e8f-9a0b-5c2d3e4f5a6b"]})
    name: Name
    description: Description | None = None
    opportunityIds: OpportunityIds = Field(default_factory=list)


class DealGroupUpdate(RequestModel):
    """Partial: only the fields sent change; ``opportunityIds`` replaces the whole membership."""
    model_config = example({"opportunityIds": ["0192a3b4-c5d6-7e8f-9a0b-5c2d3e4f5a6b"]})

    name: Name | MISSING = UNSENT  # an explicit null is refused
    description: Description | None | MISSING = UNSENT
    opportunityIds: OpportunityIds | MISSING = UNSENT


class DealGroup(ResponseModel):
    id: str
    name: str
    description: str | None
    opportunityIds: list[str] = Field(description="Sorted by opportunity id (creation order).")
    createdAt: datetime
    updatedAt: datetime


class DealGroupList(ResponseModel):
    dealGroups: list[DealGroup]


def render_deal_group(group: DealGroupView) -> dict[str, Any]:
    """A deal group as the API shows it (``DealGroup``), also the snapshot its events carry."""
    return {
        "id": str(group.id),
        "name": group.name,
        "description": group.description,
        "opportunityIds": [str(i) for i in sorted(group.opportunity_ids)],
        "createdAt": group.created_at.astimezone(UTC),
        "updatedAt": group.updated_at.astimezone(UTC),
    }


def render_deal_group_list(groups: Iterable[DealGroupView]) -> dict[str, Any]:
    """An opportunity's deal groups (``DealGroupList``)."""
    return {"dealGroups": [render_deal_group(group) for group in groups]}
