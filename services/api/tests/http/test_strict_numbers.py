"""Numbers are ASCII digits only: a decimal string or a query parameter written with other Unicode
digits (full-width, Arabic-Indic, Devanagari, superscripts) is a 400 naming the field, never the
number its digits look like, and nothing is written."""

from __future__ import annotations

import uuid

import pytest

from quote_helpers import API, QUOTES, error_fields, product, quote_body, simple_quote

UNICODE_DIGITS = [
    "１２",  # full-width
    "١٢",  # Arabic-Indic
    "۱۲",  # extended Arabic-Indic (Persian)
    "१२",  # Devanagari
    "¹²",  # superscripts
    "1２",  # ASCII and full-width mixed
    "1.５",  # a full-width fraction digit
    "－1",  # a full-width minus
]


def create_body(kind: str, value: str, product_id: str, user_id: str) -> tuple[str, dict, str]:
    """The create request that carries ``value`` in one decimal field, and that field's name."""
    line = {"productId": product_id, "quantity": "1"}
    if kind == "quantity":
        return QUOTES, quote_body({**line, "quantity": value}), "lines[0].quantity"
    if kind == "discountPercent":
        return QUOTES, quote_body({**line, "discountPercent": value}), "lines[0].discountPercent"
    if kind == "netUnitPrice":
        return QUOTES, quote_body({**line, "netUnitPrice": value}), "lines[0].netUnitPrice"
    if kind == "listPrice":
        body = {"specId": f"SKU-{uuid.uuid4().hex[:8]}", "name": "Seat", "priceModel": "PER_UNIT", "listPrices": {"USD": value}}
        return f"{API}/products", body, "listPrices.USD"
    if kind == "tierUpTo":
        tiers = {"USD": [{"upTo": value, "unitPrice": "9"}, {"upTo": None, "unitPrice": "8"}]}
        body = {
            "specId": f"SKU-{uuid.uuid4().hex[:8]}",
            "name": "Seat",
            "priceModel": "TIERED",
            "listPrices": {"USD": "9"},
            "tiers": tiers,
        }
        return f"{API}/products", body, "tiers.USD[0].upTo"
    if kind == "pricebookPrice":
        body = {"name": "Book", "currency": "USD", "entries": [{"productId": product_id, "unitPrice": value}]}
        return f"{API}/pricebooks", body, "entries[0].unitPrice"
    if kind == "opportunityAmount":
        body = {"name": "Deal", "accountName": "Initech", "amount": value, "currency": "USD"}
        return f"{API}/opportunities", body, "amount"
    if kind == "ruleThreshold":
        condition = {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": value}
        body = {"name": "Deep discount", "condition": condition, "approvalGroupId": str(uuid.uuid4())}
        return f"{API}/approval-rules", body, "condition.threshold"
    raise AssertionError(kind)


KINDS = [
    "quantity",
    "discountPercent",
    "netUnitPrice",
    "listPrice",
    "tierUpTo",
    "pricebookPrice",
    "opportunityAmount",
    "ruleThreshold",
]


def count(client, org, path: str) -> int:
    resp = client.simulate_get(f"{path}?limit=500", headers=org.admin.headers)
    assert resp.status_code == 200
    return len(next(value for key, value in resp.json.items() if key != "nextCursor"))


@pytest.mark.parametrize("kind", KINDS)
def test_decimal_fields_refuse_unicode_digits_naming_the_field(client, org, kind):
    item = product(client, org)
    for value in UNICODE_DIGITS:
        path, body, field = create_body(kind, value, item["id"], str(org.user.user_id))
        before = count(client, org, path)
        resp = client.simulate_post(path, json=body, headers=org.admin.headers)
        assert resp.status_code == 400, (kind, value, resp.json)
        assert resp.json["code"] == "validation_error"
        assert error_fields(resp) == [field], (kind, value)
        assert resp.json["detail"].startswith(f"{field}: "), (kind, value)
        assert count(client, org, path) == before  # nothing written


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_fields_accept_ascii_digits(client, org, kind):
    item = product(client, org)
    group = client.simulate_post(
        f"{API}/approval-groups",
        json={"name": "Approvers", "memberUserIds": [str(org.admin.user_id)], "requiredApprovals": 1},
        headers=org.admin.headers,
    ).json
    path, body, _ = create_body(kind, "12", item["id"], str(org.user.user_id))
    if kind == "ruleThreshold":
        body["approvalGroupId"] = group["id"]
    resp = client.simulate_post(path, json=body, headers=org.admin.headers)
    assert resp.status_code == 201, (kind, resp.json)


@pytest.mark.parametrize("field", ["quantity", "discountPercent", "netUnitPrice"])
def test_a_line_edit_refuses_unicode_digits(client, org, field):
    quote = simple_quote(client, org)
    url = f"{QUOTES}/{quote['id']}/lines/{quote['lines'][0]['id']}"
    for value in UNICODE_DIGITS:
        resp = client.simulate_patch(url, json={field: value}, headers=org.user.headers)
        assert resp.status_code == 400 and error_fields(resp) == [field], (field, value, resp.json)
    after = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.user.headers).json
    assert after["lines"] == quote["lines"]


@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("/products", "limit"),
        ("/pricing-quotes", "limit"),
        ("/approval-rules", "limit"),
        ("/approvals", "limit"),
        ("/approvals", "count"),
        ("/approvals", "offset"),
    ],
)
@pytest.mark.parametrize("value", ["１０", "١٠", "१०", "¹⁰", "1０"])
def test_query_numbers_refuse_unicode_digits(client, org, path, param, value):
    resp = client.simulate_get(f"{API}{path}", params={param: value}, headers=org.admin.headers)
    assert resp.status_code == 400, (path, param, value, resp.json)
    assert param in resp.json["detail"]
