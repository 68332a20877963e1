"""Spec section 4, the endpoints the api serves: /whoami, /products (admin keys also get inactive
products and cost data), /pricing-quotes, the approval configuration lists, /approvals (newest
first, a status filter, deprecated offset/count still working), /deal-groups (opportunityId
required; that opportunity's groups); unknown request fields dropped silently, the rest processed."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

import contract_data as data
from contract_client import assert_problem


def test_only_https_is_served(api, org):
    """A plain-HTTP request on the api's port gets no HTTP answer, let alone data."""
    origin = urlsplit(api.origin)
    request = f"GET /external/v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: {org.viewer.key}\r\n\r\n"
    with socket.create_connection((origin.hostname, origin.port), timeout=10) as plain:
        plain.sendall(request.encode())
        try:
            answer = plain.recv(65536)
        except ConnectionResetError:
            answer = b""
    assert not answer.startswith(b"HTTP/1.1 2"), answer[:200]
    assert b"organization" not in answer


# --- /whoami -------------------------------------------------------------------------------------------


def test_whoami_returns_the_organization_and_nothing_else(api, org):
    for member in (org.viewer, org.user, org.admin):
        resp = api.get("/whoami", member)
        assert resp.status_code == 200
        assert resp.json() == {"organization": {"id": org.id, "name": org.name}}


def test_whoami_answers_for_each_organization(api, other_org):
    assert api.ok("GET", "/whoami", other_org.viewer)["organization"] == {"id": other_org.id, "name": other_org.name}


# --- /products -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog(api, org):
    active = data.product(api, org.admin, cost={"USD": "35.00"})
    inactive = data.product(api, org.admin, active=False, cost={"USD": "12.00"})
    return {"active": active, "inactive": inactive}


def _all_products(api, key, **params):
    return {p["id"]: p for p in api.walk("/products", key, "products", limit=500, params=params)}


def test_admin_lists_inactive_products_and_cost(api, org, catalog):
    products = _all_products(api, org.admin)
    assert products[catalog["active"]["id"]]["cost"] == {"USD": "35.00"}
    assert products[catalog["inactive"]["id"]]["active"] is False
    assert products[catalog["inactive"]["id"]]["cost"] == {"USD": "12.00"}
    only_inactive = _all_products(api, org.admin, active="false")
    assert catalog["inactive"]["id"] in only_inactive and catalog["active"]["id"] not in only_inactive


@pytest.mark.parametrize("role", ["viewer", "user"])
def test_non_admin_lists_active_products_without_cost(api, org, catalog, role):
    member = getattr(org, role)
    products = _all_products(api, member)
    assert catalog["active"]["id"] in products
    assert catalog["inactive"]["id"] not in products
    assert all(p["active"] is True for p in products.values())
    assert not any("cost" in p for p in products.values()), "cost data shown to a non-admin key"
    assert _all_products(api, member, active="false") == {}


@pytest.mark.parametrize("role", ["viewer", "user"])
def test_non_admin_cannot_read_an_inactive_product_or_its_cost(api, org, catalog, role):
    member = getattr(org, role)
    assert_problem(api.get(f"/products/{catalog['inactive']['id']}", member), 404)
    assert "cost" not in api.ok("GET", f"/products/{catalog['active']['id']}", member)


def test_product_read_shows_what_was_created(api, org, catalog):
    product = api.ok("GET", f"/products/{catalog['active']['id']}", org.viewer)
    assert product["listPrices"] == {"USD": "100.00"}
    assert product["specId"] == catalog["active"]["specId"]
    assert product["active"] is True


# --- /pricing-quotes -----------------------------------------------------------------------------------


def test_pricing_quote_create_read_list_and_edit(api, org, catalog):
    product_id = catalog["active"]["id"]
    quote = data.quote(api, org.user, lines=[data.line(product_id, quantity="2", discountPercent="10")])
    assert quote["status"] == "DRAFT"
    assert quote["ownerUserId"] == org.user.user_id
    [line] = quote["lines"]
    assert (line["productId"], line["quantity"], line["listUnitPrice"], line["netUnitPrice"]) == (product_id, "2", "100.00", "90.00")
    assert line["amountPerBillingPeriod"] == "180.00"
    assert quote["totals"]["totalContractValue"] == "2160.00"  # 180 a month for 12 months

    assert api.ok("GET", f"/pricing-quotes/{quote['id']}", org.viewer)["lines"][0]["id"] == line["id"]
    listed = {q["id"]: q for q in api.walk("/pricing-quotes", org.viewer, "pricingQuotes", limit=500)}
    assert listed[quote["id"]]["name"] == quote["name"]
    assert listed[quote["id"]]["totals"]["totalContractValue"] == "2160.00"

    edited = api.ok("PATCH", f"/pricing-quotes/{quote['id']}", org.user, json={"subscriptionTermMonths": 24})
    assert edited["totals"]["totalContractValue"] == "4320.00"


def test_pricing_quotes_filter_by_owner(api, org):
    mine = data.quote(api, org.user)
    admins = data.quote(api, org.admin)
    listed = api.walk("/pricing-quotes", org.viewer, "pricingQuotes", limit=500, params={"ownerUserId": org.user.user_id})
    ids = {q["id"] for q in listed}
    assert mine["id"] in ids and admins["id"] not in ids
    assert {q["ownerUserId"] for q in listed} == {org.user.user_id}


# --- approval configuration ------------------------------------------------------------------------------


def test_approval_groups_rule_groups_and_rules(api, org):
    group = data.approval_group(api, org.admin, [org.admin.user_id, org.user.user_id], required=2)
    assert sorted(group["memberUserIds"]) == sorted([org.admin.user_id, org.user.user_id])
    assert group["requiredApprovals"] == 2
    step = data.approval_rule_group(api, org.admin, position=3)
    rule = data.approval_rule(
        api, org.admin, group["id"], ruleGroupId=step["id"],
        condition={"type": "TERM_MONTHS_ABOVE", "threshold": "120"},
    )
    assert rule["condition"]["type"] == "TERM_MONTHS_ABOVE"
    assert rule["ruleGroupId"] == step["id"] and rule["approvalGroupId"] == group["id"]

    groups = {g["id"] for g in api.walk("/approval-groups", org.viewer, "approvalGroups", limit=500)}
    assert group["id"] in groups  # view-only keys read approval groups
    steps = {s["id"]: s for s in api.walk("/approval-rule-groups", org.admin, "approvalRuleGroups", limit=500)}
    assert steps[step["id"]]["ruleIds"] == [rule["id"]]
    rules = {r["id"] for r in api.walk("/approval-rules", org.admin, "approvalRules", limit=500)}
    assert rule["id"] in rules


# --- /approvals --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def approvals_org(make_org, api):
    """Requests in every status, made one by one (newest first is checked against creation order)."""
    org = make_org("Approvals Co")
    product = data.product(api, org.admin)
    group = data.approval_group(api, org.admin, [org.admin.user_id])
    data.approval_rule(api, org.admin, group["id"], condition={"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "20"})
    made = []

    def request(discount: str) -> dict:
        made.append(data.approval_request(api, org.user, product["id"], discount=discount))
        return made[-1]

    granted = request("0")  # no rule fires: approved at once
    pending = request("30")
    approved = request("30")
    api.ok("POST", f"/approvals/{approved['id']}/approve", org.admin, json={"comment": "fine"})
    rejected = request("30")
    api.ok("POST", f"/approvals/{rejected['id']}/reject", org.admin, json={})
    recalled = request("30")
    api.ok("DELETE", f"/pricing-quotes/{recalled['quoteId']}/approval", org.user)
    org.requests = {"granted": granted, "pending": pending, "approved": approved, "rejected": rejected, "recalled": recalled}
    org.created = [r["id"] for r in made]
    return org


def test_approvals_newest_first(api, approvals_org):
    listed = api.ok("GET", "/approvals", approvals_org.viewer)
    assert [a["id"] for a in listed["approvals"]] == list(reversed(approvals_org.created))
    assert listed["nextCursor"] is None


def test_approvals_status_filter(api, approvals_org):
    r = approvals_org.requests
    expected = {
        "PENDING": [r["pending"]],
        "APPROVED": [r["approved"], r["granted"]],
        "REJECTED": [r["rejected"]],
        "RECALLED": [r["recalled"]],
    }
    for status, requests in expected.items():
        listed = api.ok("GET", "/approvals", approvals_org.viewer, params={"status": status})["approvals"]
        assert [a["id"] for a in listed] == [x["id"] for x in requests], status
        assert {a["status"] for a in listed} == {status}


def test_approvals_unknown_status_is_400(api, approvals_org):
    assert "status" in assert_problem(api.get("/approvals", approvals_org.viewer, params={"status": "MAYBE"}), 400)["detail"]


def test_approvals_deprecated_offset_and_count_still_work(api, approvals_org):
    newest_first = list(reversed(approvals_org.created))
    resp = api.get("/approvals", approvals_org.viewer, params={"offset": 1, "count": 2})
    assert resp.status_code == 200, resp.text[:300]
    assert [a["id"] for a in resp.json()["approvals"]] == newest_first[1:3]
    assert resp.headers.get("Deprecation"), "deprecated parameters answered without a Deprecation header"
    for params, expected in (({"count": 3}, newest_first[:3]), ({"offset": 3}, newest_first[3:])):
        resp = api.get("/approvals", approvals_org.viewer, params=params)
        assert [a["id"] for a in resp.json()["approvals"]] == expected, params
        assert resp.headers.get("Deprecation"), params


def test_approvals_deprecated_paging_combines_with_the_status_filter(api, approvals_org):
    r = approvals_org.requests
    resp = api.get("/approvals", approvals_org.viewer, params={"status": "APPROVED", "offset": 1, "count": 1})
    assert [a["id"] for a in resp.json()["approvals"]] == [r["granted"]["id"]]
    assert resp.headers.get("Deprecation")


def test_approvals_deprecated_parameters_out_of_range_are_400(api, approvals_org):
    wrong = {}
    for params in ({"count": 0}, {"count": 101}, {"count": "²"}, {"offset": -1}, {"offset": "abc"}, {"offset": "²"}):
        resp = api.get("/approvals", approvals_org.viewer, params=params)
        if resp.status_code != 400:
            wrong[str(params)] = f"{resp.status_code} {resp.text[:100]}"
    assert not wrong, f"not refused with 400: {wrong}"


def test_approvals_limit_and_cursor_carry_no_deprecation(api, approvals_org):
    resp = api.get("/approvals", approvals_org.viewer, params={"limit": 2})
    assert resp.status_code == 200 and "Deprecation" not in resp.headers
    walked = api.walk("/approvals", approvals_org.viewer, "approvals", limit=2)
    assert [a["id"] for a in walked] == list(reversed(approvals_org.created))


def test_approval_request_read(api, approvals_org):
    pending = approvals_org.requests["pending"]
    body = api.ok("GET", f"/approvals/{pending['id']}", approvals_org.viewer)
    assert body["status"] == "PENDING" and body["quoteId"] == pending["quoteId"]
    quote = api.ok("GET", f"/pricing-quotes/{pending['quoteId']}", approvals_org.viewer)
    assert quote["status"] == "PENDING_APPROVAL"


# --- /deal-groups --------------------------------------------------------------------------------------------


def test_deal_groups_require_opportunity_id(api, org):
    body = assert_problem(api.get("/deal-groups", org.viewer), 400)
    assert "opportunityId" in str(body)
    assert "opportunityId" in str(assert_problem(api.get("/deal-groups", org.viewer, params={"opportunityId": "nope"}), 400))


def test_deal_groups_of_an_opportunity(api, org):
    first, second, alone = (data.opportunity(api, org.admin) for _ in range(3))
    both = data.deal_group(api, org.admin, [first["id"], second["id"]])
    only_first = data.deal_group(api, org.admin, [first["id"]])
    only_second = data.deal_group(api, org.admin, [second["id"]])

    groups = api.ok("GET", "/deal-groups", org.viewer, params={"opportunityId": first["id"]})["dealGroups"]
    assert sorted(g["id"] for g in groups) == sorted([both["id"], only_first["id"]])
    assert only_second["id"] not in {g["id"] for g in groups}
    assert all(first["id"] in g["opportunityIds"] for g in groups)
    assert api.ok("GET", "/deal-groups", org.viewer, params={"opportunityId": alone["id"]})["dealGroups"] == []


def test_deal_groups_follow_membership_changes(api, org):
    opportunity = data.opportunity(api, org.admin)
    group = data.deal_group(api, org.admin, [opportunity["id"]])
    api.ok("PATCH", f"/deal-groups/{group['id']}", org.admin, json={"opportunityIds": []})
    assert api.ok("GET", "/deal-groups", org.viewer, params={"opportunityId": opportunity["id"]})["dealGroups"] == []


# --- unknown request fields ----------------------------------------------------------------------------------


def test_unknown_fields_are_dropped_and_the_rest_processed_on_create(api, org, other_org):
    product = data.product(
        api, org.admin, colour="blue", nested={"a": [1, 2]}, id="00000000-0000-7000-8000-000000000001",
        organizationId=other_org.id, createdAt="1999-01-01T00:00:00Z",
    )
    assert product["id"] != "00000000-0000-7000-8000-000000000001"
    assert not {"colour", "nested", "organizationId"} & set(product)
    assert product["createdAt"] > "2000"
    quote = data.quote(api, org.user, lines=[data.line(product["id"], discountPercent="5", margin="99")], flavour=1)
    assert quote["lines"][0]["netUnitPrice"] == "95.00"
    assert "flavour" not in quote and "margin" not in quote["lines"][0]


def test_unknown_fields_are_dropped_on_update(api, org):
    opportunity = data.opportunity(api, org.admin, accountName="Initech")
    unchanged = api.ok("PATCH", f"/opportunities/{opportunity['id']}", org.user, json={"acountName": "Typo", "x": None})
    assert unchanged["accountName"] == "Initech" and unchanged["name"] == opportunity["name"]
    changed = api.ok("PATCH", f"/opportunities/{opportunity['id']}", org.user, json={"name": "Renamed", "stag": "LOST"})
    assert changed["name"] == "Renamed" and changed["stage"] == opportunity["stage"]
