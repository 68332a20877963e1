"""Helpers shared by the pricing-quote tests: catalog, opportunities and quotes through the API,
the outbox read back, and render functions held to their response models."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select

from dps_common.json import dumps, loads

from dps_api.db.models.outbox import OutboxEvent

API = "/external/v1"
QUOTES = f"{API}/pricing-quotes"


def product(client, org, *, prices: dict[str, str] | None = None, **fields: Any) -> dict:
    body = {
        "specId": f"SKU-{uuid.uuid4().hex[:8]}",
        "name": "Seat licence",
        "priceModel": "PER_UNIT",
        "listPrices": prices if prices is not None else {"USD": "100.00"},
        **fields,
    }
    resp = client.simulate_post(f"{API}/products", json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def edit_product(client, org, product_id: str, **fields: Any) -> dict:
    resp = client.simulate_patch(f"{API}/products/{product_id}", json=fields, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    return resp.json


def pricebook(client, org, currency: str, entries: dict[str, str], assigned=(), **fields: Any) -> dict:
    body = {
        "name": f"Book {uuid.uuid4().hex[:6]}",
        "currency": currency,
        "assignedUserIds": [str(member.user_id) for member in assigned],
        "entries": [{"productId": pid, "unitPrice": price} for pid, price in entries.items()],
        **fields,
    }
    resp = client.simulate_post(f"{API}/pricebooks", json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def edit_pricebook(client, org, pricebook_id: str, **fields: Any) -> dict:
    resp = client.simulate_patch(f"{API}/pricebooks/{pricebook_id}", json=fields, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    return resp.json


def opportunity(client, org) -> dict:
    body = {"name": "Big deal", "accountName": "Initech"}
    resp = client.simulate_post(f"{API}/opportunities", json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def quote_body(*lines: dict, **fields: Any) -> dict:
    return {
        "name": "Initech renewal",
        "currency": "USD",
        "billingFrequency": "MONTHLY",
        "subscriptionTermMonths": 12,
        "lines": list(lines),
        **fields,
    }


def create_quote(client, member, body: dict) -> dict:
    resp = client.simulate_post(QUOTES, json=body, headers=member.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def simple_quote(client, org, member=None, **fields: Any) -> dict:
    """A USD quote with one 100.00/month line, owned by ``member`` (the org's user by default)."""
    item = product(client, org)
    return create_quote(client, member or org.user, quote_body({"productId": item["id"], "quantity": "1"}, **fields))


def events(tx, organization_id, event_type: str | None = None) -> list[dict]:
    with tx() as session:
        stmt = select(OutboxEvent).where(OutboxEvent.organization_id == organization_id)
        if event_type is not None:
            stmt = stmt.where(OutboxEvent.event_type == event_type)
        return [row.envelope for row in session.scalars(stmt.order_by(OutboxEvent.occurred_at, OutboxEvent.id))]


def quote_events(tx, organization_id, quote_id: str) -> list[str]:
    return [e["type"] for e in events(tx, organization_id) if e["type"].startswith("quote.") and e["data"]["id"] == quote_id]


def error_fields(resp) -> list[str]:
    return [e["field"] for e in resp.json.get("errors", [])]


def _no_undocumented_fields(model: BaseModel, where: str) -> None:
    """ResponseModel allows extra fields (it only documents): a rendered field the model does not
    declare lands in ``model_extra``, which must stay empty at every level."""
    assert not model.model_extra, f"{where}: rendered but not documented: {sorted(model.model_extra)}"
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, BaseModel):
                _no_undocumented_fields(item, f"{where}.{name}[{i}]" if isinstance(value, list) else f"{where}.{name}")


def assert_documented(model: type[BaseModel], rendered: dict[str, Any]) -> None:
    """``rendered`` (a render function's output) is exactly what ``model`` documents: in strict mode
    (enums as their members, dates as dates, no coercion), no undocumented field at any level, and the
    JSON a client receives validates too."""
    _no_undocumented_fields(model.model_validate(rendered, strict=True), model.__name__)
    wire = dumps(rendered)
    _no_undocumented_fields(model.model_validate_json(wire, strict=True), model.__name__)
    assert set(loads(wire)) == set(model.model_fields), model.__name__  # every documented field is sent
