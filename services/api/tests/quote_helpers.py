"""Helpers shared by the pricing-quote tests: catalog, opportunities and quotes through the API,
and the outbox read back."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

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
