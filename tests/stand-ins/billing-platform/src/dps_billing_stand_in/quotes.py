"""Draft quotes: line items of existing prices, in one currency, recurring ones in one interval."""

from __future__ import annotations

import time
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .catalog import Caller
from .errors import invalid
from .ids import new_id
from .params import Params
from .store import ObjectStore

MAX_LINE_ITEMS = 20
DESCRIPTION_MAX = 500
DEFAULT_EXPIRY_DAYS = 30  # Stripe's default quote expiry when the template sets none


def create_quote(params: Params, caller: Caller, store: ObjectStore) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    params.reject_unknown(
        {"line_items", "expires_at", "description", "subscription_data", "metadata", "customer",
         "collection_method", "header", "footer", "expand"}
    )
    now = time.time()
    expand = expansions(params)
    items = params.array("line_items") or []
    if len(items) > MAX_LINE_ITEMS:
        raise invalid(
            f"A quote can have at most {MAX_LINE_ITEMS} line items; you passed {len(items)}.", param="line_items"
        )
    line_items = [_line_item(item, caller, store) for item in items]
    _check_compatible(line_items, [item.name("price") for item in items])
    expires_at = params.future_timestamp("expires_at", now)
    description = params.string("description", max_length=DESCRIPTION_MAX)
    subscription_data = _subscription_data(params, now)
    metadata = params.metadata()
    customer = params.string("customer")
    if customer is not None:
        raise invalid(f"No such customer: '{customer}'", code="resource_missing", param="customer")
    collection_method = params.choice("collection_method", ("charge_automatically", "send_invoice"))
    header = params.string("header", max_length=50)
    footer = params.string("footer", max_length=500)
    currency = line_items[0]["currency"] if line_items else None
    computed = _computed(line_items)
    total = computed["upfront"]["amount_total"]
    quote: dict[str, Any] = {
        "id": new_id("qt"),
        "object": "quote",
        "amount_subtotal": total,
        "amount_total": total,
        "application": caller.application,
        "application_fee_amount": None,
        "application_fee_percent": None,
        "automatic_tax": {"enabled": False, "liability": None, "status": None},
        "collection_method": collection_method or "charge_automatically",
        "computed": computed,
        "created": int(now),
        "currency": currency,
        "customer": None,
        "default_tax_rates": [],
        "description": description,
        "discounts": [],
        "expires_at": expires_at if expires_at is not None else int(now) + DEFAULT_EXPIRY_DAYS * 86400,
        "footer": footer,
        "from_quote": None,
        "header": header,
        "invoice": None,
        "invoice_settings": {"days_until_due": None, "issuer": {"type": "self"}},
        "livemode": caller.livemode,
        "metadata": metadata,
        "number": None,
        "on_behalf_of": None,
        "status": "draft",
        "status_transitions": {"accepted_at": None, "canceled_at": None, "finalized_at": None},
        "subscription": None,
        "subscription_data": subscription_data,
        "subscription_schedule": None,
        "test_clock": None,
        "total_details": {"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0},
        "transfer_data": None,
    }
    store.add(caller.account, "quote", quote, line_items)
    return (with_line_items(quote, line_items) if "line_items" in expand else quote), line_items


def expansions(params: Params) -> list[str]:
    expand = params.strings("expand")
    for index, path in enumerate(expand):
        if path != "line_items":
            raise invalid(f"This property cannot be expanded ({path}).", param=f"expand[{index}]")
    return expand


def with_line_items(quote: dict[str, Any], line_items: list[dict[str, Any]]) -> dict[str, Any]:
    url = f"/v1/quotes/{quote['id']}/line_items"
    return {**quote, "line_items": {"object": "list", "data": line_items, "has_more": False, "url": url}}


def _line_item(item: Params, caller: Caller, store: ObjectStore) -> dict[str, Any]:
    item.reject_unknown({"price", "quantity"})
    price_id = item.string("price", required=True)
    assert price_id is not None
    price = store.get(caller.account, "price", price_id)
    if price is None:
        raise invalid(f"No such price: '{price_id}'", code="resource_missing", param=item.name("price"))
    if not price["active"]:
        raise invalid(
            f"The price specified ({price_id}) is inactive. This field only accepts active prices.",
            param=item.name("price"),
        )
    quantity = item.integer("quantity", minimum=1)
    quantity = 1 if quantity is None else quantity
    product = store.get(caller.account, "product", price["product"])
    amount = int((Decimal(price["unit_amount_decimal"]) * quantity).to_integral_value(ROUND_HALF_UP))
    return {
        "id": new_id("li"),
        "object": "item",
        "amount_discount": 0,
        "amount_subtotal": amount,
        "amount_tax": 0,
        "amount_total": amount,
        "currency": price["currency"],
        "description": product["name"] if product else None,
        "discounts": [],
        "price": price,
        "quantity": quantity,
        "taxes": [],
    }


def _check_compatible(line_items: list[dict[str, Any]], params: list[str]) -> None:
    """One currency for all lines, one billing interval for the recurring ones: a quote becomes a single
    subscription when accepted, and Stripe refuses mixed ones at creation."""
    first_recurring: dict[str, Any] | None = None
    for item, param in zip(line_items, params):
        if item["currency"] != line_items[0]["currency"]:
            raise invalid(
                f"All prices on a quote must have the same currency: {item['price']['id']} is in "
                f"{item['currency']}, the first line in {line_items[0]['currency']}.",
                param=param,
            )
        recurring = item["price"]["recurring"]
        if recurring is None:
            continue
        if first_recurring is None:
            first_recurring = recurring
        elif (recurring["interval"], recurring["interval_count"]) != (
            first_recurring["interval"],
            first_recurring["interval_count"],
        ):
            raise invalid(
                "All recurring prices on a quote must have the same billing interval: "
                f"{item['price']['id']} bills every {recurring['interval_count']} {recurring['interval']}(s), "
                f"an earlier line every {first_recurring['interval_count']} {first_recurring['interval']}(s).",
                param=param,
            )


def _subscription_data(params: Params, now: float) -> dict[str, Any]:
    data = params.child("subscription_data")
    result: dict[str, Any] = {"description": None, "effective_date": None, "metadata": {}, "trial_period_days": None}
    if data is None:
        return result
    data.reject_unknown({"effective_date", "metadata", "description", "trial_period_days"})
    if data.string("effective_date") == "current_period_end":
        raise invalid(
            "subscription_data[effective_date] can be current_period_end only on a quote that updates an existing "
            "subscription.",
            param="subscription_data[effective_date]",
        )
    result["effective_date"] = data.future_timestamp("effective_date", now)
    result["metadata"] = data.metadata()
    result["description"] = data.string("description", max_length=500)
    result["trial_period_days"] = data.integer("trial_period_days", minimum=1, maximum=730)
    return result


def _computed(line_items: list[dict[str, Any]]) -> dict[str, Any]:
    upfront = sum(item["amount_total"] for item in line_items)
    recurring_items = [item for item in line_items if item["price"]["recurring"] is not None]
    zero = {"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0}
    recurring = None
    if recurring_items:
        period = recurring_items[0]["price"]["recurring"]
        total = sum(item["amount_total"] for item in recurring_items)
        recurring = {
            "amount_subtotal": total,
            "amount_total": total,
            "interval": period["interval"],
            "interval_count": period["interval_count"],
            "total_details": dict(zero),
        }
    return {
        "recurring": recurring,
        "upfront": {"amount_subtotal": upfront, "amount_total": upfront, "total_details": dict(zero)},
    }
