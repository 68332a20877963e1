"""What the catalog use cases are asked to do (products, pricebooks): plain values, no request bodies,
and the rules across a product's fields. Resources build the commands from request bodies.

Partial updates tell "not sent" (``NOT_SENT``) apart from an explicit null (``None``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from dps_common.errors import invalid_fields

from dps_api.domain.commands import NOT_SENT, Patch
from dps_api.domain.vocabulary import PriceFrequency, PriceModel

Prices = dict[str, str]  # ISO 4217 code -> amount at the currency's minor units, e.g. {"USD": "100.00"}
# TIERED: per currency, [{"upTo": "10", "unitPrice": "9.00"}, ..., {"upTo": None, "unitPrice": "8.00"}]
Tiers = dict[str, list[dict[str, str | None]]]


@dataclass(frozen=True)
class NewProduct:
    spec_id: str
    name: str
    price_model: PriceModel
    short_name: str | None = None
    active: bool = True
    price_frequency: PriceFrequency | None = None  # None: the price model's default
    list_prices: Prices | None = None
    tiers: Tiers | None = None
    locked: bool = False
    cost: Prices | None = None


@dataclass(frozen=True)
class ProductChanges:
    """A partial update; ``None`` clears short_name, tiers and cost."""

    spec_id: Patch[str] = NOT_SENT  # accepted only when equal to the current one
    name: Patch[str] = NOT_SENT
    short_name: Patch[str | None] = NOT_SENT
    active: Patch[bool] = NOT_SENT
    price_model: Patch[PriceModel] = NOT_SENT
    price_frequency: Patch[PriceFrequency] = NOT_SENT
    list_prices: Patch[Prices] = NOT_SENT
    tiers: Patch[Tiers | None] = NOT_SENT
    locked: Patch[bool] = NOT_SENT
    cost: Patch[Prices | None] = NOT_SENT


@dataclass(frozen=True)
class PriceEntry:
    product_id: UUID
    unit_price: Decimal  # in the pricebook's currency, at most its minor units


@dataclass(frozen=True)
class NewPricebook:
    name: str
    currency: str
    active: bool = True
    assigned_user_ids: Sequence[UUID] = ()
    entries: Sequence[PriceEntry] = ()


@dataclass(frozen=True)
class PricebookChanges:
    """A partial update; the lists are replaced as a whole."""

    name: Patch[str] = NOT_SENT
    currency: Patch[str] = NOT_SENT
    active: Patch[bool] = NOT_SENT
    assigned_user_ids: Patch[Sequence[UUID]] = NOT_SENT
    entries: Patch[Sequence[PriceEntry]] = NOT_SENT


def check_product(state: Mapping[str, Any]) -> None:
    """Rules across fields, on the product as it would be saved (``state``: attribute -> value)."""
    model, frequency, tiers = state["price_model"], state["price_frequency"], state["tiers"]
    one_time_model, one_time = model == PriceModel.ONE_TIME_FEE, frequency == PriceFrequency.ONE_TIME
    errors = []
    if one_time_model and not one_time:
        errors.append(("priceFrequency", "ONE_TIME_FEE products use the ONE_TIME price frequency"))
    if one_time and not one_time_model:
        errors.append(("priceFrequency", "only ONE_TIME_FEE products use the ONE_TIME price frequency"))
    if model != PriceModel.TIERED and tiers:
        errors.append(("tiers", "only TIERED products have tiers"))
    if model == PriceModel.TIERED and not tiers:
        errors.append(("tiers", "TIERED products need tiers"))
    if model == PriceModel.TIERED and tiers and set(tiers) != set(state["list_prices"]):
        errors.append(("tiers", "tiers must give exactly the currencies of listPrices"))
    if errors:
        raise invalid_fields(errors)


def default_frequency(price_model: PriceModel) -> PriceFrequency:
    return PriceFrequency.ONE_TIME if price_model == PriceModel.ONE_TIME_FEE else PriceFrequency.MONTHLY
