"""Products and prices: validated as Stripe validates them, returned in Stripe's shapes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from .currencies import SUPPORTED, THREE_DECIMAL
from .errors import ApiError, invalid
from .ids import new_id
from .params import Params
from .store import ObjectStore

PRODUCT_NAME_MAX = 5000
INTERVALS = ("day", "week", "month", "year")
# At most three years between two billings, in each interval.
MAX_INTERVAL_COUNT = {"day": 1095, "week": 156, "month": 36, "year": 3}
_DECIMAL_PLACES_MAX = 12


@dataclass(frozen=True)
class Caller:
    """Who calls: the connected account the key acts on, and the app when the key is an OAuth token."""

    account: str
    livemode: bool
    application: str | None


def create_product(params: Params, caller: Caller, store: ObjectStore) -> dict[str, Any]:
    params.reject_unknown({"name", "id", "active", "description", "metadata", "unit_label", "url"})
    name = params.string("name", required=True, max_length=PRODUCT_NAME_MAX)
    custom_id = params.string("id", max_length=255)
    active = params.boolean("active")
    description = params.string("description", max_length=40000)
    metadata = params.metadata()
    unit_label = params.string("unit_label", max_length=12)
    url = params.string("url", max_length=5000)
    now = int(time.time())
    product = {
        "id": custom_id or new_id("prod"),
        "object": "product",
        "active": True if active is None else active,
        "attributes": [],
        "created": now,
        "default_price": None,
        "description": description,
        "images": [],
        "livemode": caller.livemode,
        "marketing_features": [],
        "metadata": metadata,
        "name": name,
        "package_dimensions": None,
        "shippable": None,
        "statement_descriptor": None,
        "tax_code": None,
        "type": "service",
        "unit_label": unit_label,
        "updated": now,
        "url": url,
    }
    store.add(caller.account, "product", product)
    return product


def create_price(params: Params, caller: Caller, store: ObjectStore) -> dict[str, Any]:
    params.reject_unknown(
        {"currency", "product", "unit_amount", "unit_amount_decimal", "recurring", "metadata", "nickname", "active",
         "tax_behavior", "lookup_key"}
    )
    currency = params.string("currency", required=True)
    assert currency is not None
    if currency not in SUPPORTED:
        hint = " Currency codes are lowercase." if currency.lower() in SUPPORTED else ""
        raise invalid(
            f"Invalid currency: {currency}.{hint} Stripe currently supports these currencies: "
            + ", ".join(sorted(SUPPORTED)),
            param="currency",
        )
    product_id = params.string("product", required=True)
    assert product_id is not None
    if store.get(caller.account, "product", product_id) is None:
        raise invalid(f"No such product: '{product_id}'", code="resource_missing", param="product")
    unit_amount, unit_amount_decimal = _amount(params, currency)
    recurring = _recurring(params)
    metadata = params.metadata()
    nickname = params.string("nickname", max_length=5000)
    active = params.boolean("active")
    tax_behavior = params.choice("tax_behavior", ("exclusive", "inclusive", "unspecified"))
    lookup_key = params.string("lookup_key", max_length=200)
    price = {
        "id": new_id("price"),
        "object": "price",
        "active": True if active is None else active,
        "billing_scheme": "per_unit",
        "created": int(time.time()),
        "currency": currency,
        "custom_unit_amount": None,
        "livemode": caller.livemode,
        "lookup_key": lookup_key,
        "metadata": metadata,
        "nickname": nickname,
        "product": product_id,
        "recurring": recurring,
        "tax_behavior": tax_behavior or "unspecified",
        "tiers_mode": None,
        "transform_quantity": None,
        "type": "one_time" if recurring is None else "recurring",
        "unit_amount": unit_amount,
        "unit_amount_decimal": unit_amount_decimal,
    }
    store.add(caller.account, "price", price)
    return price


def _amount(params: Params, currency: str) -> tuple[int | None, str]:
    unit_amount = params.integer("unit_amount", minimum=0)
    decimal_text = params.string("unit_amount_decimal")
    if unit_amount is not None and decimal_text is not None:
        raise ApiError(
            400,
            "You may only specify one of these parameters: unit_amount, unit_amount_decimal.",
            code="parameters_exclusive",
            param="unit_amount",
        )
    if decimal_text is not None:
        try:
            amount = Decimal(decimal_text)
        except InvalidOperation:
            amount = Decimal("NaN")
        exponent = amount.as_tuple().exponent
        if not amount.is_finite() or amount < 0 or not isinstance(exponent, int) or -exponent > _DECIMAL_PLACES_MAX:
            raise invalid(
                f"Invalid decimal: {decimal_text}; must be a non-negative number with at most "
                f"{_DECIMAL_PLACES_MAX} decimal places",
                param="unit_amount_decimal",
            )
        return None, decimal_text
    if unit_amount is None:
        raise ApiError(400, "Missing required param: unit_amount.", code="parameter_missing", param="unit_amount")
    if currency in THREE_DECIMAL and unit_amount % 10 != 0:
        raise invalid(
            f"Invalid unit_amount: {unit_amount}. Amounts in {currency} are in thousandths and must be evenly "
            "divisible by 10 (the last digit must be 0).",
            param="unit_amount",
        )
    return unit_amount, str(unit_amount)


def _recurring(params: Params) -> dict[str, Any] | None:
    recurring = params.child("recurring")
    if recurring is None:
        return None
    recurring.reject_unknown({"interval", "interval_count", "usage_type"})
    interval = recurring.choice("interval", INTERVALS, required=True)
    assert interval is not None
    count = recurring.integer("interval_count", minimum=1)
    if count is not None and count > MAX_INTERVAL_COUNT[interval]:
        raise invalid(
            f"Invalid recurring[interval_count]: {count} {interval}s. The maximum billing interval is three years "
            f"({MAX_INTERVAL_COUNT[interval]} {interval}s).",
            param="recurring[interval_count]",
        )
    usage_type = recurring.choice("usage_type", ("licensed", "metered"))
    return {
        "interval": interval,
        "interval_count": count or 1,
        "meter": None,
        "trial_period_days": None,
        "usage_type": usage_type or "licensed",
    }
