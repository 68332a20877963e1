"""Products and pricebooks as the catalog use cases return them: plain values, no rows, no JSON.

``dps_api.schemas.catalog`` renders them (``render_product``, ``render_pricebook``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import NamedTuple, NewType
from uuid import UUID

from dps_api.domain.vocabulary import PriceFrequency, PriceModel

# A JSON document as PostgreSQL stored it (validated when written), rendered without parsing:
# parsing the list's prices only to serialise them again was most of its cost.
JsonText = NewType("JsonText", str)


class ProductView(NamedTuple):
    """A product version as read. A named tuple: the list builds one per row on its hot path."""

    id: UUID
    spec_id: str
    version: int
    name: str
    short_name: str | None
    active: bool
    price_model: PriceModel
    price_frequency: PriceFrequency
    list_prices: JsonText
    tiers: JsonText
    locked: bool
    created_at: datetime
    updated_at: datetime
    cost: JsonText | None  # None: not shown to this principal


@dataclass(frozen=True)
class PricebookView:
    """A pricebook version with its entries (product id ascending) and assigned users."""

    id: UUID
    version: int
    name: str
    currency: str
    active: bool
    assigned_user_ids: list[UUID]
    entries: dict[UUID, Decimal]  # product id -> unit price
    created_at: datetime
    updated_at: datetime  # when this version was made
