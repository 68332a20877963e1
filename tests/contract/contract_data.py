"""Test data made through the HTTP API, as an integration would: minimal valid bodies with unique
names, any field overridable."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from contract_client import Api, KeyLike

_serial = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_serial)}-{uuid.uuid4().hex[:6]}"


def product(api: Api, admin_key: KeyLike, **fields: Any) -> dict:
    body = {
        "specId": unique("SPEC"),
        "name": unique("Product"),
        "priceModel": "PER_UNIT",
        "priceFrequency": "MONTHLY",
        "listPrices": {"USD": "100.00"},
        **fields,
    }
    return api.ok("POST", "/products", admin_key, json=body, status=201)


def opportunity(api: Api, key: KeyLike, **fields: Any) -> dict:
    body = {"name": unique("Opportunity"), "accountName": "Initech", **fields}
    return api.ok("POST", "/opportunities", key, json=body, status=201)


def deal_group(api: Api, admin_key: KeyLike, opportunity_ids: list[str], **fields: Any) -> dict:
    body = {"name": unique("Deal group"), "opportunityIds": opportunity_ids, **fields}
    return api.ok("POST", "/deal-groups", admin_key, json=body, status=201)


def quote(api: Api, key: KeyLike, lines: list[dict] | None = None, **fields: Any) -> dict:
    body = {
        "name": unique("Quote"),
        "currency": "USD",
        "billingFrequency": "MONTHLY",
        "subscriptionTermMonths": 12,
        "lines": lines or [],
        **fields,
    }
    return api.ok("POST", "/pricing-quotes", key, json=body, status=201)


def approval_group(api: Api, admin_key: KeyLike, member_user_ids: list[str], required: int = 1, **fields: Any) -> dict:
    body = {"name": unique("Approvers"), "memberUserIds": member_user_ids, "requiredApprovals": required, **fields}
    return api.ok("POST", "/approval-groups", admin_key, json=body, status=201)


def approval_rule_group(api: Api, admin_key: KeyLike, position: int = 0, **fields: Any) -> dict:
    body = {"name": unique("Step"), "position": position, **fields}
    return api.ok("POST", "/approval-rule-groups", admin_key, json=body, status=201)


def approval_rule(api: Api, admin_key: KeyLike, approval_group_id: str, **fields: Any) -> dict:
    body = {
        "name": unique("Rule"),
        "condition": {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "20"},
        "approvalGroupId": approval_group_id,
        **fields,
    }
    return api.ok("POST", "/approval-rules", admin_key, json=body, status=201)


def line(product_id: str, **fields: Any) -> dict:
    return {"productId": product_id, "quantity": "1", **fields}


def approval_request(api: Api, key: KeyLike, product_id: str, discount: str = "0", **quote_fields: Any) -> dict:
    """A quote with one line, submitted for approval: the approval request it opened."""
    submitted = quote(api, key, lines=[line(product_id, discountPercent=discount)], **quote_fields)
    return api.ok("POST", f"/pricing-quotes/{submitted['id']}/approval", key, status=201)


def many(count: int, make: Callable[[], dict], workers: int = 6) -> list[dict]:
    """``count`` objects made concurrently (the server runs several workers); creation order is lost."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda _: make(), range(count)))
