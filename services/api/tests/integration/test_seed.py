"""The demo seed against the test database: it produces the demo objects through the API, and
seeding again changes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from dps_api.cli.seed import seed_demo
from dps_api.cli.seed.data import (
    APPROVAL_GROUPS,
    DEAL_GROUP,
    OPPORTUNITIES,
    ORGANIZATION,
    PRODUCTS,
    QUOTES,
    RULE_GROUPS,
    RULES,
    USERS,
)
from dps_api.composition import build_seed
from dps_api.db.models.identity import ApiKey


@pytest.fixture
def seeding(app, settings):
    return build_seed(settings, tx=app.context.tx)  # the test's transactions, rolled back after it


@pytest.fixture
def first(seeding):
    return seed_demo(seeding)


@pytest.fixture
def viewer(first, identity):
    """A view-only key of the demo organization, to look at the seed through the API."""
    key = identity.issue_key(first.organization_id, first.users["viewer"], "view only", "test")
    return {"x-api-key": key.secret}


@pytest.fixture
def admin(first, identity):
    key = identity.issue_key(first.organization_id, first.users["admin"], "admin", "test")
    return {"x-api-key": key.secret}


def walk(client, path, collection, headers, **params):
    items, params = [], {**params, "limit": 100}
    while True:
        page = client.simulate_get("/external/v1" + path, headers=headers, params=params)
        assert page.status_code == 200, page.text
        items += page.json[collection]
        if page.json["nextCursor"] is None:
            return items
        params["cursor"] = page.json["nextCursor"]


def test_the_demo_organization_and_its_users(client, first, identity, viewer):
    assert client.simulate_get("/external/v1/whoami", headers=viewer).json["organization"]["name"] == ORGANIZATION
    users = {u.email: u.role for u in identity.list_users(first.organization_id)}
    assert users == {email: role for email, _, role in USERS.values()}
    assert {"admin", "user", "view only"} <= set(users.values())


def test_the_demo_user_manages_api_keys_in_the_console_and_the_viewer_does_not(first, identity):
    """The settings console shows a user with API-key access (Sam); the admin needs no grant; Vic,
    view only, has none."""
    access = {u.email: u.api_key_access for u in identity.list_users(first.organization_id)}
    assert access == {
        USERS["admin"][0]: False,
        USERS["rep"][0]: True,
        USERS["viewer"][0]: False,
        USERS["approver"][0]: False,
    }
    assert USERS["rep"][2] == "user" and USERS["viewer"][2] == "view only"


def test_seeding_again_leaves_api_key_access_as_the_demo_left_it(seeding, first, identity):
    identity.set_api_key_access(first.users["rep"], False)  # withdrawn in the console
    seed_demo(seeding)
    assert not next(u for u in identity.list_users(first.organization_id) if u.id == first.users["rep"]).api_key_access


def test_the_catalog_and_pricebook(client, first, admin, viewer):
    products = {p["specId"]: p for p in walk(client, "/products", "products", admin)}
    assert set(products) == {p["specId"] for p in PRODUCTS}
    assert products["API-CALLS"]["priceModel"] == "TIERED" and products["API-CALLS"]["tiers"]["USD"]
    assert products["ONBOARDING"]["priceModel"] == "ONE_TIME_FEE"
    assert products["PREMIUM-SUPPORT"]["locked"] is True
    assert products["LEGACY-REPORTS"]["active"] is False
    assert "LEGACY-REPORTS" not in {p["specId"] for p in walk(client, "/products", "products", viewer)}
    (pricebook,) = walk(client, "/pricebooks", "pricebooks", admin)
    assert pricebook["id"] == first.pricebook_id and str(first.users["rep"]) in pricebook["assignedUserIds"]
    assert {e["productId"] for e in pricebook["entries"]} == {
        products[s]["id"] for s in products if products[s]["active"]
    }


def test_opportunities_and_deal_group(client, first, viewer):
    opportunities = {o["crmId"]: o for o in walk(client, "/opportunities", "opportunities", viewer)}
    assert set(opportunities) == {o["crmId"] for o in OPPORTUNITIES}
    assert {o["ownerUserId"] for o in opportunities.values()} == {str(first.users["rep"])}
    first_member = opportunities[DEAL_GROUP["crmIds"][0]]["id"]
    groups = client.simulate_get("/external/v1/deal-groups", headers=viewer, params={"opportunityId": first_member})
    (group,) = groups.json["dealGroups"]
    assert group["name"] == DEAL_GROUP["name"]
    assert sorted(group["opportunityIds"]) == sorted(opportunities[c]["id"] for c in DEAL_GROUP["crmIds"])


def test_approval_groups_rule_groups_and_rules(client, first, admin, viewer):
    groups = {g["name"]: g for g in walk(client, "/approval-groups", "approvalGroups", viewer)}
    assert set(groups) == set(APPROVAL_GROUPS)
    assert groups["Sales Managers"]["memberUserIds"] == [str(first.users["approver"])]
    rule_groups = {g["name"]: g for g in walk(client, "/approval-rule-groups", "approvalRuleGroups", admin)}
    assert [g["name"] for g in sorted(rule_groups.values(), key=lambda g: g["position"])] == [
        g["name"] for g in RULE_GROUPS
    ]
    rules = {r["name"]: r for r in walk(client, "/approval-rules", "approvalRules", admin)}
    assert set(rules) == {r["name"] for r in RULES}
    for rule in RULES:
        assert rules[rule["name"]]["approvalGroupId"] == groups[rule["group"]]["id"]
        assert rules[rule["name"]]["ruleGroupId"] == rule_groups[rule["ruleGroup"]]["id"]
        assert rules[rule["name"]]["condition"]["type"] == rule["condition"]["type"]


def test_quotes_with_their_lines(client, first, viewer):
    quotes = {q["name"]: q for q in walk(client, "/pricing-quotes", "pricingQuotes", viewer)}
    assert set(quotes) == {q["name"] for q in QUOTES}
    for spec in QUOTES:
        quote = client.simulate_get(f"/external/v1/pricing-quotes/{quotes[spec['name']]['id']}", headers=viewer).json
        assert quote["ownerUserId"] == str(first.users["rep"])
        assert quote["opportunityId"] == first.opportunities[spec["crmId"]]
        assert quote["pricebookId"] == first.pricebook_id
        assert [line["productSpecId"] for line in quote["lines"]] == [line["specId"] for line in spec["lines"]]
        assert quote["totals"]["totalContractValue"] not in ("0", "0.00")


def test_approval_requests_pending_and_approved(client, first, viewer):
    expected = {q["name"]: q["approval"] for q in QUOTES if "approval" in q}
    assert set(first.approvals) == set(expected)
    requests = {a["id"]: a for a in walk(client, "/approvals", "approvals", viewer)}
    assert set(requests) == set(first.approvals.values())
    for name, approval in expected.items():
        request = requests[first.approvals[name]]
        quote = client.simulate_get(f"/external/v1/pricing-quotes/{request['quoteId']}", headers=viewer).json
        assert quote["name"] == name and request["requestedByUserId"] == str(first.users["rep"])
        if approval == "submit":
            assert (request["status"], quote["status"]) == ("PENDING", "PENDING_APPROVAL")
        else:
            assert (request["status"], quote["status"]) == ("APPROVED", "APPROVED")
            assert [d["userId"] for d in request["decisions"]] == [str(first.users["approver"])]


def keys_by_status(tx, organization_id):
    with tx() as session:
        rows = session.execute(
            select(ApiKey.status, func.count()).where(ApiKey.organization_id == organization_id).group_by(ApiKey.status)
        ).all()
    return dict(rows)


def test_seeding_again_creates_nothing_and_leaves_no_usable_seed_key(seeding, first, tx):
    assert first.created > 0 and first.kept == 0
    after_first = keys_by_status(tx, first.organization_id)
    assert set(after_first) == {"revoked"}  # the seed's keys are revoked after use

    again = seed_demo(seeding)
    assert again.created == 0 and again.kept == first.created
    assert (again.organization_id, again.users, again.products, again.opportunities) == (
        first.organization_id, first.users, first.products, first.opportunities
    )
    assert (again.pricebook_id, again.deal_group_id) == (first.pricebook_id, first.deal_group_id)
    assert (again.approval_groups, again.rule_groups, again.rules, again.quotes, again.approvals) == (
        first.approval_groups, first.rule_groups, first.rules, first.quotes, first.approvals
    )
    # a run that only looks acts as the admin alone: one more key, revoked too
    assert keys_by_status(tx, first.organization_id) == {"revoked": after_first["revoked"] + 1}
