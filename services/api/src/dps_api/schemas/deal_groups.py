"""Request and response bodies of ``/deal-groups``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from uuid import UUID

from pydantic import Field, StringConstraints

from dps_api.schemas.common import Name, RequestModel, ResponseModel

# Bounds that keep ``GET /deal-groups?opportunityId=`` a bounded lookup without paging.
MAX_OPPORTUNITIES_PER_GROUP = 1000
MAX_GROUPS_PER_OPPORTUNITY = 100

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
    name: Name
    description: Description | None = None
    opportunityIds: OpportunityIds = Field(default_factory=list)


class DealGroupUpdate(RequestModel):
    """Partial: only the fields sent change; ``opportunityIds`` replaces the whole membership."""

    name: Name = Field(default=None)  # None means "not sent"; an explicit null is rejected
    description: Description | None = None
    opportunityIds: OpportunityIds = Field(default=None)


class DealGroup(ResponseModel):
    id: str
    name: str
    description: str | None
    opportunityIds: list[str] = Field(description="Sorted by opportunity id (creation order).")
    createdAt: datetime
    updatedAt: datetime


class DealGroupList(ResponseModel):
    dealGroups: list[DealGroup]
