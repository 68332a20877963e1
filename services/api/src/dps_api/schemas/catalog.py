"""Request and response bodies of ``/products`` and ``/pricebooks``.

Prices are maps of ISO 4217 code to a non-negative decimal string with no more decimals than the
currency's minor units (JPY 0, USD 2, KWD 3); they are stored and shown at exactly those units.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any
from uuid import UUID

from orjson import Fragment
from pydantic import MISSING, AfterValidator, BaseModel, Field, StringConstraints

from dps_common.openapi.examples import DecimalText, example

from dps_api.domain.catalog_views import PricebookView, ProductView
from dps_api.domain.money import amount_problem, currency_problem, format_amount
from dps_api.domain.vocabulary import PriceFrequency, PriceModel
from dps_api.schemas.common import (
    UNSENT,
    CurrencyCode,
    DecimalString,
    Name,
    RequestModel,
    ResponseModel,
    unsent,
)


def _currency(code: str) -> str:
    problem = currency_problem(code)
    if problem:
        raise ValueError(problem)
    return code


def _prices(prices: dict[str, str]) -> dict[str, str]:
    normalized: dict[str, str] = {}
    for currency, raw in prices.items():
        _currency(currency)
        amount = Decimal(raw)
        problem = amount_problem(currency, amount)
        if problem:
            raise ValueError(problem)
        normalized[currency] = format_amount(currency, amount)
    return normalized


class TierIn(RequestModel):
    upTo: DecimalString | None = Field(
        default=None, description="Upper bound of the quantity (inclusive); null on the last, open tier."
    )
    unitPrice: DecimalString


def _tiers(tiers: dict[str, list[TierIn]]) -> dict[str, list[TierIn]]:
    """Each currency's tiers checked, and normalized: upTo without trailing zeros, prices at the
    currency's minor units."""
    normalized: dict[str, list[TierIn]] = {}
    for currency, steps in tiers.items():
        _currency(currency)
        if not steps:
            raise ValueError(f"{currency} tiers must not be empty")
        previous = Decimal(0)
        rendered: list[TierIn] = []
        for index, tier in enumerate(steps):
            last = index == len(steps) - 1
            if (tier.upTo is None) != last:
                raise ValueError(f"{currency} tiers: only the last tier, and always the last, has upTo null")
            if tier.upTo is not None:
                up_to = Decimal(tier.upTo)
                if up_to <= previous:
                    raise ValueError(f"{currency} tiers: upTo must be positive and increase from tier to tier")
                previous = up_to
            price = Decimal(tier.unitPrice)
            problem = amount_problem(currency, price)
            if problem:
                raise ValueError(problem)
            up_to_text = None if tier.upTo is None else format(Decimal(tier.upTo).normalize(), "f")
            rendered.append(TierIn(upTo=up_to_text, unitPrice=format_amount(currency, price)))
        normalized[currency] = rendered
    return normalized


def tier_values(tiers: dict[str, list[TierIn]]) -> dict[str, list[dict[str, str | None]]]:
    """Checked tiers as the plain values the catalog stores."""
    return {currency: [tier.model_dump() for tier in steps] for currency, steps in tiers.items()}


_PRICES_DOC = "Currency code -> decimal string at the currency's minor units, e.g. {\"USD\": \"100.00\"}."
Prices = Annotated[dict[CurrencyCode, DecimalString], AfterValidator(_prices), Field(description=_PRICES_DOC)]
Tiers = Annotated[
    dict[CurrencyCode, list[TierIn]],
    AfterValidator(_tiers),
    Field(
        description="TIERED only, volume tiers per currency (the tier holding the quantity sets the unit "
        "price), upTo increasing, the last tier open (upTo null); same currencies as listPrices."
    ),
]
Currency = Annotated[CurrencyCode, AfterValidator(_currency)]
SpecId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=100, pattern=r"^[^\s\x00]+$"),
    Field(description="Stable across versions; unique within the organization; no whitespace."),
]

# --- products ---------------------------------------------------------------------------------------


class ProductCreate(RequestModel):
    model_config = example({"specId": "SEAT-PRO", "name": "Professional seat", "priceModel": "PER_UNIT", "priceFrequency": "MONTHLY", "listPrices": {"USD": "49.00", "EUR": "45.00"}, "cost": {"USD": "12.00"}})
    specId: SpecId
    name: Name
    shortName: Name | None = None
    active: bool = True
    priceModel: PriceModel
    priceFrequency: PriceFrequency | None = Field(
        default=None,
        description="Defaults to ONE_TIME for ONE_TIME_FEE products (the only ones using it), else MONTHLY.",
    )
    listPrices: Prices = Field(default_factory=dict)
    tiers: Tiers | None = None
    locked: bool = Field(
        default=False, description="Non-admin keys cannot negotiate below list. Needs locked-prices:write."
    )
    cost: Prices | None = Field(default=None, description="Unit cost per currency. Admin keys only.")


class ProductUpdate(RequestModel):
    """Partial: only the fields sent change, and any change makes a new version. Nullable fields
    (shortName, tiers, cost) are cleared with null; an explicit null elsewhere is a 400."""
    model_config = example({"listPrices": {"USD": "52.00", "EUR": "48.00"}})

    specId: SpecId | MISSING = unsent(description="Cannot change; accepted only when equal to the current one.")
    name: Name | MISSING = UNSENT
    shortName: Name | None | MISSING = UNSENT
    active: bool | MISSING = UNSENT
    priceModel: PriceModel | MISSING = unsent(description="Leaving TIERED drops the tiers unless tiers are sent.")
    priceFrequency: PriceFrequency | MISSING = UNSENT
    listPrices: Prices | MISSING = unsent(description="Replaces all list prices. " + _PRICES_DOC)
    tiers: Tiers | None | MISSING = UNSENT
    locked: bool | MISSING = UNSENT
    cost: Prices | None | MISSING = UNSENT


class TierOut(BaseModel):
    upTo: DecimalText | None
    unitPrice: DecimalText


class Product(ResponseModel):
    model_config = example({
        "id": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "specId": "CRM-SEAT", "version": 3, "name": "CRM seat",
        "shortName": "Seat", "active": True, "priceModel": "PER_UNIT", "priceFrequency": "MONTHLY",
        "listPrices": {"USD": "40.00", "EUR": "37.00"}, "tiers": {}, "locked": False,
        "cost": {"USD": "12.50"}, "createdAt": "2026-09-01T10:00:00Z", "updatedAt": "2026-10-20T16:30:00Z",
    })
    id: str
    specId: str
    version: int
    name: str
    shortName: str | None
    active: bool
    priceModel: PriceModel
    priceFrequency: PriceFrequency
    listPrices: dict[str, DecimalText]
    tiers: dict[str, list[TierOut]]
    locked: bool
    cost: dict[str, DecimalText] | None = Field(default=None, description="Present for admin keys only.")
    createdAt: datetime
    updatedAt: datetime = Field(description="When this version was made.")


class ProductList(ResponseModel):
    products: list[Product]
    nextCursor: str | None


def render_product(product: ProductView) -> dict[str, Any]:
    """A product as the API shows it (``Product``), also the snapshot its events carry. The JSON
    fields go out as stored, unparsed (``orjson.Fragment``): the list's hot path, hence one unpacking
    of the tuple rather than an attribute read per field."""
    (id_, spec_id, version, name, short_name, active, price_model, price_frequency, list_prices, tiers, locked,
     created_at, updated_at, cost) = product
    rendered = {
        "id": id_,
        "specId": spec_id,
        "version": version,
        "name": name,
        "shortName": short_name,
        "active": active,
        "priceModel": price_model,
        "priceFrequency": price_frequency,
        "listPrices": Fragment(list_prices),
        "tiers": Fragment(tiers),
        "locked": locked,
        "createdAt": created_at,
        "updatedAt": updated_at,
    }
    if cost is not None:
        rendered["cost"] = Fragment(cost)
    return rendered


# --- pricebooks -------------------------------------------------------------------------------------


class PricebookEntryIn(RequestModel):
    productId: UUID
    unitPrice: DecimalString = Field(description="In the pricebook's currency, at its minor units.")


class PricebookCreate(RequestModel):
    model_config = example({"name": "North America 2027", "currency": "USD", "assignedUserIds": ["0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b"], "entries": [{"productId": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "unitPrice": "45.00"}]})
    name: Name
    currency: Currency
    active: bool = True
    assignedUserIds: list[UUID] = Field(default_factory=list, description="Users who may price quotes with it.")
    entries: list[PricebookEntryIn] = Field(default_factory=list, description="At most one entry per product.")


class PricebookUpdate(RequestModel):
    """Partial: only the fields sent change, and any change makes a new version. Lists are replaced
    as a whole."""
    model_config = example({"entries": [{"productId": "0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "unitPrice": "44.00"}]})

    name: Name | MISSING = UNSENT
    currency: Currency | MISSING = UNSENT
    active: bool | MISSING = UNSENT
    assignedUserIds: list[UUID] | MISSING = UNSENT
    entries: list[PricebookEntryIn] | MISSING = unsent(description="Replaces all entries.")


class PricebookEntryOut(BaseModel):
    productId: str
    unitPrice: DecimalText


class Pricebook(ResponseModel):
    id: str
    version: int
    name: str
    currency: str
    active: bool
    assignedUserIds: list[str]
    entries: list[PricebookEntryOut]
    createdAt: datetime
    updatedAt: datetime = Field(description="When this version was made.")


class PricebookList(ResponseModel):
    pricebooks: list[Pricebook]
    nextCursor: str | None


def render_pricebook(pricebook: PricebookView) -> dict[str, Any]:
    """A pricebook version as the API shows it (``Pricebook``), also the snapshot its events carry."""
    return {
        "id": str(pricebook.id),
        "version": pricebook.version,
        "name": pricebook.name,
        "currency": pricebook.currency,
        "active": pricebook.active,
        "assignedUserIds": [str(user_id) for user_id in pricebook.assigned_user_ids],
        "entries": [
            {"productId": str(product_id), "unitPrice": format_amount(pricebook.currency, price)}
            for product_id, price in pricebook.entries.items()
        ],
        "createdAt": pricebook.created_at,
        "updatedAt": pricebook.updated_at,
    }
