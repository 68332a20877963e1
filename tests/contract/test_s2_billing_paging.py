"""Spec sections 2 and 4, the paging envelope and rules, for ``GET /pricing-quotes/{id}/billing-pushes``
(ours: newest first, default 50, maximum 500, as the delivery list): ``limit`` and ``cursor`` in,
``nextCursor`` always out (null on the last page), items under ``billingPushes``; a limit out of
range is 400, never clamped; a cursor the service did not issue, or another endpoint's, is 400."""

from __future__ import annotations

import pytest

import contract_data as data
from contract_client import assert_problem

DEFAULT, MAXIMUM = 50, 500
PUSHES = DEFAULT + 1


@pytest.fixture(scope="module")
def org(make_org, billing):
    org = make_org("Billing Paging Co")
    billing.connect(org)
    return org


@pytest.fixture(scope="module")
def pushed(billing, org):
    """A quote pushed one more time than the default page holds, oldest first. Its only line is
    hourly, so each push fails at once without a platform call (a push must end before the next)."""
    hourly = billing.product(org, priceModel="HOURLY", listPrices={"USD": "100.00"})
    quote = billing.approved_quote(org, org.user, [data.line(hourly["id"])])
    return quote, [billing.pushed(org.admin, quote["id"])["id"] for _ in range(PUSHES)]


def test_the_list_is_newest_first_and_the_walk_sees_every_push_once(billing, org, pushed):
    quote, ids = pushed
    walked = billing.connector.walk(billing.pushes_path(quote["id"]), org.viewer, "billingPushes", limit=7)
    assert [p["id"] for p in walked] == ids[::-1]


def test_the_default_page_is_the_documented_default(billing, org, pushed):
    quote, ids = pushed
    body = billing.connector.ok("GET", billing.pushes_path(quote["id"]), org.viewer)
    assert set(body) >= {"billingPushes", "nextCursor"}
    assert len(body["billingPushes"]) == DEFAULT
    assert isinstance(body["nextCursor"], str) and body["nextCursor"]
    [limit] = [p for p in billing.connector.operations[("GET", "/pricing-quotes/{quote_id}/billing-pushes")]
               ["parameters"] if p["name"] == "limit"]
    assert (limit["schema"]["default"], limit["schema"]["maximum"]) == (DEFAULT, MAXIMUM)


@pytest.mark.parametrize("limit", [1, PUSHES, MAXIMUM])
def test_limits_in_range_are_honoured(billing, org, pushed, limit):
    quote, ids = pushed
    body = billing.connector.ok("GET", billing.pushes_path(quote["id"]), org.viewer, params={"limit": limit})
    assert [p["id"] for p in body["billingPushes"]] == ids[::-1][:limit]
    assert (body["nextCursor"] is None) == (limit >= PUSHES)  # a full last page can still say null


@pytest.mark.parametrize("limit", ["0", str(MAXIMUM + 1), "-1", "ten", "1.5"])
def test_a_limit_out_of_range_is_400_never_clamped(billing, org, pushed, limit):
    quote, _ = pushed
    assert_problem(billing.connector.get(billing.pushes_path(quote["id"]), org.viewer, params={"limit": limit}), 400)


def test_a_cursor_the_service_did_not_issue_is_400(billing, org, pushed, api):
    quote, _ = pushed
    path = billing.pushes_path(quote["id"])
    issued = billing.connector.ok("GET", path, org.viewer, params={"limit": 2})["nextCursor"]
    billing.product(org)  # two products at least: the product list's first page of one has a cursor
    products_cursor = api.ok("GET", "/products", org.viewer, params={"limit": 1})["nextCursor"]
    assert products_cursor  # a cursor the service issued, for another endpoint
    for cursor in ("not-a-cursor", issued[:-2] + ("AA" if not issued.endswith("AA") else "BB"), products_cursor):
        assert_problem(billing.connector.get(path, org.viewer, params={"cursor": cursor}), 400)


def test_a_cursor_is_used_unchanged_with_the_same_limit(billing, org, pushed):
    quote, ids = pushed
    path = billing.pushes_path(quote["id"])
    first = billing.connector.ok("GET", path, org.viewer, params={"limit": 3})
    second = billing.connector.ok("GET", path, org.viewer, params={"limit": 3, "cursor": first["nextCursor"]})
    assert [p["id"] for p in first["billingPushes"] + second["billingPushes"]] == ids[::-1][:6]
