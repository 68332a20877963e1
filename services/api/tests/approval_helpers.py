"""Helpers of the approval tests: configuration, quotes, submit/decide/recall calls and events."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from dps_api.db.models.outbox import OutboxEvent

V1 = "/external/v1"
APPROVALS = f"{V1}/approvals"


def post(client, member, path, body=None, status=201):
    resp = client.simulate_post(path, json=body, headers=member.headers)
    assert resp.status_code == status, resp.json
    return resp.json


def product(client, org, **fields):
    body = {
        "specId": f"SKU-{uuid.uuid4().hex[:8]}",
        "name": "Seat licence",
        "priceModel": "PER_UNIT",
        "priceFrequency": "MONTHLY",
        "listPrices": {"USD": "100.00"},
        **fields,
    }
    return post(client, org.admin, f"{V1}/products", body)


def quote(client, member, product_id, *, quantity="1", discount=None, term=12, lines=True, **fields):
    """A USD quote; 100.00 a month per unit at list price."""
    line = {"productId": product_id, "quantity": quantity}
    if discount is not None:
        line["discountPercent"] = discount
    body = {
        "name": "Initech renewal",
        "currency": "USD",
        "billingFrequency": "MONTHLY",
        "subscriptionTermMonths": term,
        "lines": [line] if lines else [],
        **fields,
    }
    return post(client, member, f"{V1}/pricing-quotes", body)


def approval_group(client, org, members, required=1, name="Approvers"):
    body = {"name": name, "memberUserIds": [str(m.user_id) for m in members], "requiredApprovals": required}
    return post(client, org.admin, f"{V1}/approval-groups", body)


def rule(client, org, group, condition, step=None, name="Rule"):
    body = {"name": name, "condition": condition, "approvalGroupId": group["id"]}
    if step is not None:
        body["ruleGroupId"] = step["id"]
    return post(client, org.admin, f"{V1}/approval-rules", body)


def step(client, org, name, position):
    return post(client, org.admin, f"{V1}/approval-rule-groups", {"name": name, "position": position})


def submit(client, member, quote_id, status=201):
    resp = client.simulate_post(f"{V1}/pricing-quotes/{quote_id}/approval", headers=member.headers)
    assert resp.status_code == status, resp.json
    return resp.json


def recall(client, member, quote_id):
    return client.simulate_delete(f"{V1}/pricing-quotes/{quote_id}/approval", headers=member.headers)


def decide(client, member, approval_id, verb="approve", comment=None):
    body = {"comment": comment} if comment is not None else None
    return client.simulate_post(f"{APPROVALS}/{approval_id}/{verb}", json=body, headers=member.headers)


def quote_status(client, org, quote_id):
    return client.simulate_get(f"{V1}/pricing-quotes/{quote_id}", headers=org.viewer.headers).json["status"]


def event_types(tx, org, prefixes=("approval.", "quote.")):
    with tx() as session:
        stmt = select(OutboxEvent).where(OutboxEvent.organization_id == org.id)
        rows = session.scalars(stmt.order_by(OutboxEvent.occurred_at, OutboxEvent.id))
        return [
            (row.event_type, row.envelope["data"]["id"])
            for row in rows
            if row.event_type.startswith(prefixes) and row.event_type != "quote.created"
        ]


DISCOUNT_ABOVE_10 = {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "10"}
TERM_ABOVE_24 = {"type": "TERM_MONTHS_ABOVE", "threshold": "24"}
