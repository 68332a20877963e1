"""What the deal group use cases are asked to do: plain values, no request bodies. Resources build
them from request bodies; ``NOT_SENT`` leaves a field as it is, ``None`` clears the description.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from dps_api.domain.commands import NOT_SENT, Patch


@dataclass(frozen=True)
class NewDealGroup:
    name: str
    description: str | None = None
    opportunity_ids: Sequence[UUID] = ()


@dataclass(frozen=True)
class DealGroupChanges:
    """A partial update; ``opportunity_ids`` replaces the whole membership."""

    name: Patch[str] = NOT_SENT
    description: Patch[str | None] = NOT_SENT
    opportunity_ids: Patch[Sequence[UUID]] = NOT_SENT
