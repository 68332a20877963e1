"""``/pricing-quotes/{id}/lines``: add, edit, remove; positions, re-pricing, the locked-price rule."""

from __future__ import annotations

import pytest

from quote_helpers import QUOTES, create_quote, error_fields, events, product, quote_body, quote_events, simple_quote


def lines_url(quote: dict) -> str:
    return f"{QUOTES}/{quote['id']}/lines"


def line_url(quote: dict, index: int = 0) -> str:
    return f"{lines_url(quote)}/{quote['lines'][index]['id']}"


def test_add_edit_and_remove_lines_keep_positions_and_totals(client, org, tx):
    quote = simple_quote(client, org)  # line 1: 100.00 a month
    extra = product(client, org, prices={"USD": "40.00"})
    fee = product(client, org, priceModel="ONE_TIME_FEE", prices={"USD": "999.99"})
    resp = client.simulate_post(lines_url(quote), json={"productId": extra["id"], "quantity": "2.5"}, headers=org.user.headers)
    assert resp.status_code == 201, resp.json
    resp = client.simulate_post(lines_url(quote), json={"productId": fee["id"]}, headers=org.user.headers)
    quote = resp.json
    assert [line["position"] for line in quote["lines"]] == [1, 2, 3] and quote["lineCount"] == 3
    assert quote["lines"][1]["quantity"] == "2.5" and quote["lines"][1]["amountPerBillingPeriod"] == "100.00"
    assert quote["totals"]["recurringPerBillingPeriod"] == "200.00" and quote["totals"]["oneTime"] == "999.99"
    assert quote["totals"]["totalContractValue"] == "3399.99"  # 200 x 12 + 999.99

    resp = client.simulate_delete(line_url(quote, 0), headers=org.user.headers)
    assert resp.status_code == 204 and resp.content == b""
    after = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.user.headers).json
    assert [(line["position"], line["id"]) for line in after["lines"]] == [(1, quote["lines"][1]["id"]), (2, quote["lines"][2]["id"])]
    assert after["totals"]["recurringPerBillingPeriod"] == "100.00" and after["lineCount"] == 2
    assert quote_events(tx, org.id, quote["id"]) == ["quote.created", "quote.updated", "quote.updated", "quote.updated"]
    assert events(tx, org.id, "quote.updated")[-1]["data"] == after


def test_editing_a_line_switches_between_discount_and_net_price(client, org):
    quote = simple_quote(client, org)
    url = line_url(quote)
    resp = client.simulate_patch(url, json={"discountPercent": "12.34567"}, headers=org.user.headers)
    line = resp.json["lines"][0]
    assert (line["discountPercent"], line["netUnitPrice"], line["amountPerBillingPeriod"]) == ("12.3457", "87.6543", "87.65")
    resp = client.simulate_patch(url, json={"netUnitPrice": "66.666", "quantity": "3", "customName": "Seats"}, headers=org.user.headers)
    line = resp.json["lines"][0]
    assert (line["discountPercent"], line["netUnitPrice"], line["amountPerBillingPeriod"]) == ("33.3340", "66.666", "200.00")
    assert line["customName"] == "Seats" and line["quantity"] == "3"
    line = client.simulate_patch(url, json={"customName": None}, headers=org.user.headers).json["lines"][0]
    assert line["customName"] is None and line["netUnitPrice"] == "66.666"
    line = client.simulate_patch(url, json={"discountPercent": "0"}, headers=org.user.headers).json["lines"][0]
    assert line["netUnitPrice"] == "100.00" and line["amountPerBillingPeriod"] == "300.00"


def test_quantity_changes_move_a_tiered_line_between_tiers(client, org):
    tiers = {"USD": [{"upTo": "10", "unitPrice": "20.00"}, {"upTo": None, "unitPrice": "15.00"}]}
    item = product(client, org, priceModel="TIERED", prices={"USD": "20.00"}, tiers=tiers)
    quote = create_quote(client, org.user, quote_body({"productId": item["id"], "quantity": "10", "discountPercent": "10"}))
    assert quote["lines"][0]["listUnitPrice"] == "20.00" and quote["lines"][0]["amountPerBillingPeriod"] == "180.00"
    line = client.simulate_patch(line_url(quote), json={"quantity": "11"}, headers=org.user.headers).json["lines"][0]
    assert (line["listUnitPrice"], line["netUnitPrice"], line["amountPerBillingPeriod"]) == ("15.00", "13.50", "148.50")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"quantity": "0"}, "quantity"),
        ({"quantity": None}, "quantity"),
        ({"quantity": 2}, "quantity"),
        ({"discountPercent": "101"}, "discountPercent"),
        ({"netUnitPrice": "-1"}, "netUnitPrice"),
        ({"discountPercent": "5", "netUnitPrice": "90"}, "netUnitPrice"),
        ({"discountPercent": None}, "discountPercent"),
    ],
)
def test_invalid_line_edits_are_400_naming_the_field(client, org, tx, body, field):
    quote = simple_quote(client, org)
    resp = client.simulate_patch(line_url(quote), json=body, headers=org.user.headers)
    assert resp.status_code == 400 and error_fields(resp) == [field], resp.json
    assert client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.user.headers).json == quote
    assert quote_events(tx, org.id, quote["id"]) == ["quote.created"]


def test_invalid_line_additions_are_400_naming_the_field(client, org, other_org):
    quote = simple_quote(client, org)
    resp = client.simulate_post(lines_url(quote), json={"productId": quote["lines"][0]["productId"], "quantity": "-1"}, headers=org.user.headers)
    assert resp.status_code == 400 and error_fields(resp) == ["quantity"]
    resp = client.simulate_post(lines_url(quote), json={"productId": product(client, other_org)["id"]}, headers=org.user.headers)
    assert resp.status_code == 400 and resp.json["code"] == "unknown_reference" and error_fields(resp) == ["productId"]
    resp = client.simulate_post(lines_url(quote), json={}, headers=org.user.headers)
    assert resp.status_code == 400 and error_fields(resp) == ["productId"]


def test_users_change_lines_only_on_their_own_quotes(client, org):
    quote = simple_quote(client, org, member=org.admin)
    item = quote["lines"][0]["productId"]
    for resp in (
        client.simulate_post(lines_url(quote), json={"productId": item}, headers=org.user.headers),
        client.simulate_patch(line_url(quote), json={"quantity": "2"}, headers=org.user.headers),
        client.simulate_delete(line_url(quote), headers=org.user.headers),
    ):
        assert resp.status_code == 403 and resp.json["code"] == "not_quote_owner"
    resp = client.simulate_delete(line_url(quote), headers=org.viewer.headers)
    assert resp.status_code == 403 and resp.json["requiredScope"] == "quotes:write"
    users = simple_quote(client, org)
    assert client.simulate_patch(line_url(users), json={"quantity": "2"}, headers=org.admin.headers).status_code == 200


def test_locked_products_go_below_list_only_with_an_admin_key(client, org, tx):
    locked = product(client, org, locked=True)
    body = quote_body({"productId": locked["id"], "discountPercent": "5"})
    resp = client.simulate_post(QUOTES, json=body, headers=org.user.headers)
    assert resp.status_code == 403 and resp.json["code"] == "locked_price"
    assert resp.json["detail"].startswith("lines[0]") and "locked-prices:write" in resp.json["detail"]
    assert events(tx, org.id, "quote.created") == []

    quote = create_quote(client, org.user, quote_body({"productId": locked["id"]}))  # at list price: fine
    assert quote["lockedBelowList"] is False and quote["lines"][0]["locked"] is True
    for change in ({"netUnitPrice": "99.99"}, {"discountPercent": "0.0001"}):
        resp = client.simulate_patch(line_url(quote), json=change, headers=org.user.headers)
        assert resp.status_code == 403 and resp.json["code"] == "locked_price"
    markup = client.simulate_patch(line_url(quote), json={"netUnitPrice": "110"}, headers=org.user.headers).json
    assert markup["lines"][0]["discountPercent"] == "-10.0000" and markup["lockedBelowList"] is False

    resp = client.simulate_patch(line_url(quote), json={"discountPercent": "20"}, headers=org.admin.headers)
    assert resp.status_code == 200 and resp.json["lockedBelowList"] is True
    # the owner may still change what is not the price; the admin's discount stays and stays flagged
    resp = client.simulate_patch(line_url(quote), json={"quantity": "4"}, headers=org.user.headers)
    assert resp.status_code == 200 and resp.json["lockedBelowList"] is True
    assert resp.json["lines"][0]["amountPerBillingPeriod"] == "320.00"
    assert resp.json["totals"]["maxDiscountPercent"] == "20.0000"
    admin_quote = create_quote(client, org.admin, body)
    assert admin_quote["lockedBelowList"] is True
