"""Spec section 8, page sizes: each list's default and maximum; ``limit`` = max works, max + 1, 0, a
negative or a non-integer limit is a 400 (never clamped). The 10 MB body limit is in test_s7_errors."""

from __future__ import annotations

import pytest

import contract_data as data
from contract_client import assert_problem

# (path, collection property, default, max) of spec section 8, for the lists the api serves
PAGE_SIZES = [
    ("/products", "products", 100, 500),
    ("/pricing-quotes", "pricingQuotes", 100, 500),
    ("/approval-rules", "approvalRules", 100, 500),
    ("/approval-rule-groups", "approvalRuleGroups", 100, 500),
    ("/approval-groups", "approvalGroups", 100, 500),
    ("/approvals", "approvals", 20, 100),
]
IDS = [path for path, *_ in PAGE_SIZES]


@pytest.fixture(scope="module")
def limits_org(make_org, api):
    """An organization holding one item more than each list's default page size."""
    org = make_org("Limits Co")
    product = data.product(api, org.admin)
    data.many(100, lambda: data.product(api, org.admin))
    group = data.approval_group(api, org.admin, [org.admin.user_id])
    data.many(100, lambda: data.approval_group(api, org.admin, [org.admin.user_id]))
    # thresholds no zero-discount quote reaches: the approvals below are granted at once
    data.many(101, lambda: data.approval_rule(api, org.admin, group["id"]))
    data.many(101, lambda: data.approval_rule_group(api, org.admin))
    data.many(21, lambda: data.approval_request(api, org.user, product["id"]))
    data.many(101 - 21, lambda: data.quote(api, org.user))
    return org


@pytest.mark.parametrize("path, prop, default, maximum", PAGE_SIZES, ids=IDS)
def test_default_page_size(api, limits_org, path, prop, default, maximum):
    body = api.ok("GET", path, limits_org.admin)
    assert len(body[prop]) == default
    assert isinstance(body["nextCursor"], str)


@pytest.mark.parametrize("path, prop, default, maximum", PAGE_SIZES, ids=IDS)
def test_limit_at_the_maximum_works(api, limits_org, path, prop, default, maximum):
    body = api.ok("GET", path, limits_org.admin, params={"limit": maximum})
    assert len(body[prop]) == default + 1  # everything, on one page
    assert body["nextCursor"] is None


@pytest.mark.parametrize("path, prop, default, maximum", PAGE_SIZES, ids=IDS)
def test_limit_one(api, limits_org, path, prop, default, maximum):
    body = api.ok("GET", path, limits_org.admin, params={"limit": 1})
    assert len(body[prop]) == 1
    assert isinstance(body["nextCursor"], str)


@pytest.mark.parametrize("path, prop, default, maximum", PAGE_SIZES, ids=IDS)
def test_limit_outside_the_range_is_400_never_clamped(api, limits_org, path, prop, default, maximum):
    for limit in (maximum + 1, 0, -1, 10 * maximum):
        body = assert_problem(api.get(path, limits_org.admin, params={"limit": limit}), 400)
        assert "limit" in body["detail"], body


@pytest.mark.parametrize("path, prop, default, maximum", PAGE_SIZES, ids=IDS)
def test_non_integer_limit_is_400(api, limits_org, path, prop, default, maximum):
    # "٥" and "²" are digits to str.isdigit() but not ASCII integers: a server must refuse them, not crash
    wrong = {}
    for limit in ("ten", "1.0", "1e2", "0x10", "5abc", "+5", "٥", "²"):
        resp = api.get(path, limits_org.admin, params={"limit": limit})
        if resp.status_code != 400 or "limit" not in resp.json().get("detail", ""):
            wrong[limit] = f"{resp.status_code} {resp.text[:120]}"
    assert not wrong, f"limit values not refused with 400: {wrong}"


def test_limit_and_cursor_on_the_second_page_follow_the_same_bounds(api, limits_org):
    cursor = api.ok("GET", "/products", limits_org.admin, params={"limit": 1})["nextCursor"]
    assert_problem(api.get("/products", limits_org.admin, params={"limit": 501, "cursor": cursor}), 400)
    assert len(api.ok("GET", "/products", limits_org.admin, params={"limit": 500, "cursor": cursor})["products"]) == 100
