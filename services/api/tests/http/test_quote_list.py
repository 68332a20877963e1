"""``GET /pricing-quotes``: keyset paging, filters bound to cursors, totals without lines."""

from __future__ import annotations

import uuid

import pytest

from dps_api.adapters.outbox import OUTBOX
from dps_api.services.quote_approval import change_quote_status

from quote_helpers import API, QUOTES, create_quote, opportunity, product, quote_body


def make_quotes(client, org, count: int, member=None, **fields) -> list[dict]:
    item = product(client, org)
    return [
        create_quote(client, member or org.user, quote_body({"productId": item["id"]}, name=f"Q{i}", **fields))
        for i in range(count)
    ]


def walk(client, headers, query: str, limit: int) -> tuple[list[dict], int]:
    seen, pages, cursor = [], 0, None
    while True:
        url = f"{QUOTES}?limit={limit}{query}" + (f"&cursor={cursor}" if cursor else "")
        resp = client.simulate_get(url, headers=headers)
        assert resp.status_code == 200, resp.json
        assert len(resp.json["pricingQuotes"]) <= limit
        seen += resp.json["pricingQuotes"]
        pages += 1
        cursor = resp.json["nextCursor"]
        if cursor is None:
            return seen, pages


def test_walks_every_page_in_creation_order_and_ends_with_a_null_cursor(client, org, other_org):
    quotes = make_quotes(client, org, 7)
    make_quotes(client, other_org, 2)
    seen, pages = walk(client, org.viewer.headers, "", 3)
    assert [q["id"] for q in seen] == [q["id"] for q in quotes] == sorted(q["id"] for q in quotes)
    assert pages == 3
    exact, pages = walk(client, org.viewer.headers, "", 7)
    assert len(exact) == 7 and pages == 1


def test_list_items_carry_totals_but_not_lines(client, org):
    [quote] = make_quotes(client, org, 1)
    resp = client.simulate_get(QUOTES, headers=org.viewer.headers)
    [item] = resp.json["pricingQuotes"]
    assert resp.json["nextCursor"] is None
    assert "lines" not in item and item["lineCount"] == 1
    assert item == {k: v for k, v in quote.items() if k != "lines"}


def test_default_page_is_100(client, org):
    # 101 quotes without lines keep this cheap
    for i in range(101):
        create_quote(client, org.user, quote_body(name=f"Q{i}"))
    first = client.simulate_get(QUOTES, headers=org.viewer.headers).json
    assert len(first["pricingQuotes"]) == 100 and first["nextCursor"]
    rest = client.simulate_get(f"{QUOTES}?cursor={first['nextCursor']}", headers=org.viewer.headers).json
    assert len(rest["pricingQuotes"]) == 1 and rest["nextCursor"] is None


@pytest.mark.parametrize("limit", ["0", "501", "-1", "ten", "1.5"])
def test_limit_out_of_range_is_400(client, org, limit):
    resp = client.simulate_get(f"{QUOTES}?limit={limit}", headers=org.viewer.headers)
    assert resp.status_code == 400 and resp.json["code"] == "invalid_limit"


def test_limit_bounds_1_and_500_are_accepted(client, org):
    for limit in (1, 500):
        assert client.simulate_get(f"{QUOTES}?limit={limit}", headers=org.viewer.headers).status_code == 200


def test_foreign_forged_and_filter_changed_cursors_are_400(client, org):
    make_quotes(client, org, 3)
    cursor = client.simulate_get(f"{QUOTES}?limit=1", headers=org.viewer.headers).json["nextCursor"]
    filtered = client.simulate_get(f"{QUOTES}?limit=1&status=DRAFT", headers=org.viewer.headers).json["nextCursor"]
    product(client, org)
    product(client, org)
    products_cursor = client.simulate_get(f"{API}/products?limit=1", headers=org.viewer.headers).json["nextCursor"]
    assert products_cursor
    for bad in (products_cursor, "garbage", cursor + "x", filtered):
        resp = client.simulate_get(f"{QUOTES}?limit=1&cursor={bad}", headers=org.viewer.headers)
        assert resp.status_code == 400 and resp.json["code"] == "invalid_cursor", bad
    # a cursor issued for one filter does not resume another
    resp = client.simulate_get(f"{QUOTES}?limit=1&status=APPROVED&cursor={filtered}", headers=org.viewer.headers)
    assert resp.status_code == 400
    ok = client.simulate_get(f"{QUOTES}?limit=1&status=DRAFT&cursor={filtered}", headers=org.viewer.headers)
    assert ok.status_code == 200


def test_filters_by_status_owner_and_opportunity_across_pages(client, org, app):
    opp = opportunity(client, org)
    mine = make_quotes(client, org, 3, opportunityId=opp["id"])
    admins = make_quotes(client, org, 2, member=org.admin)
    with app.context.tx() as session:
        change_quote_status(OUTBOX, session, org.id, uuid.UUID(mine[1]["id"]), "APPROVED", app.context.now(), "quote.approved")

    def ids(query):
        return [q["id"] for q in walk(client, org.viewer.headers, query, 1)[0]]

    assert ids(f"&ownerUserId={org.admin.user_id}") == [q["id"] for q in admins]
    assert ids(f"&opportunityId={opp['id']}") == [q["id"] for q in mine]
    assert ids("&status=APPROVED") == [mine[1]["id"]]
    assert ids(f"&status=DRAFT&ownerUserId={org.user.user_id}") == [mine[0]["id"], mine[2]["id"]]


@pytest.mark.parametrize(("query", "field"), [("status=LOST", "status"), ("ownerUserId=me", "ownerUserId"), ("opportunityId=1", "opportunityId")])
def test_malformed_filters_are_400_naming_the_parameter(client, org, query, field):
    resp = client.simulate_get(f"{QUOTES}?{query}", headers=org.viewer.headers)
    assert resp.status_code == 400 and resp.json["errors"][0]["field"] == field


def test_listing_needs_a_key(client):
    assert client.simulate_get(QUOTES).status_code == 401
