"""Spec section 2 (the paging envelope) with the paging rules of section 4: items under the
collection-named property, nextCursor always present and null on the last page, every item seen
exactly once by a walk, in a stable order (newest first for /approvals), also when items are
inserted or removed mid-walk (for /approvals and /approval-rules the spec allows an item ahead of
the cursor to be seen twice or missed, so there only the walk itself must hold)."""

from __future__ import annotations

from collections import Counter

import pytest

import contract_data as data

COUNT = 12  # items per list in the paging organization; walked 5 at a time
LISTS = [
    ("/products", "products"),
    ("/pricing-quotes", "pricingQuotes"),
    ("/approval-rules", "approvalRules"),
    ("/approval-rule-groups", "approvalRuleGroups"),
    ("/approval-groups", "approvalGroups"),
    ("/approvals", "approvals"),
]
IDS = [path for path, _ in LISTS]


@pytest.fixture(scope="module")
def paging_org(make_org, api):
    org = make_org("Paging Co")
    org.product = data.product(api, org.admin)
    org.group = data.approval_group(api, org.admin, [org.admin.user_id])
    data.many(COUNT - 1, lambda: data.product(api, org.admin))
    data.many(COUNT - 1, lambda: data.approval_group(api, org.admin, [org.admin.user_id]))
    # a rule no zero-discount quote trips: the approval requests below are granted at once
    data.many(COUNT, lambda: data.approval_rule(api, org.admin, org.group["id"]))
    data.many(COUNT, lambda: data.approval_rule_group(api, org.admin))
    for _ in range(COUNT):  # one by one: newest-first order is checked against creation order
        org.last_approval = data.approval_request(api, org.user, org.product["id"])
    return org


def _ids(items: list[dict]) -> list[str]:
    return [item["id"] for item in items]


@pytest.mark.parametrize("path, prop", LISTS, ids=IDS)
def test_envelope_items_under_the_collection_property_and_next_cursor(api, paging_org, path, prop):
    body = api.ok("GET", path, paging_org.admin, params={"limit": 5})
    assert set(body) >= {prop, "nextCursor"}
    assert len(body[prop]) == 5 and all(isinstance(item, dict) and item["id"] for item in body[prop])
    assert isinstance(body["nextCursor"], str) and body["nextCursor"]
    pages = list(api.pages(path, paging_org.admin, prop, limit=5))
    assert len(pages) >= 3  # 12 or more items, 5 at a time
    last = api.get(path, paging_org.admin, params={"limit": 500 if path != "/approvals" else 100}).json()
    assert "nextCursor" in last and last["nextCursor"] is None


@pytest.mark.parametrize(
    "path, prop, params",
    [
        ("/products", "products", {"active": "false"}),  # a view-only key sees no inactive product
        ("/approvals", "approvals", {"status": "REJECTED"}),
        ("/pricing-quotes", "pricingQuotes", {"status": "REJECTED"}),
    ],
)
def test_empty_list_still_has_next_cursor_null(api, paging_org, path, prop, params):
    body = api.ok("GET", path, paging_org.viewer, params=params)
    assert body[prop] == []
    assert "nextCursor" in body and body["nextCursor"] is None


@pytest.mark.parametrize("path, prop", LISTS, ids=IDS)
def test_walk_sees_every_item_once_in_a_stable_order(api, paging_org, path, prop):
    everything = api.walk(path, paging_org.admin, prop, limit=500 if path != "/approvals" else 100)
    assert len(everything) >= COUNT
    for limit in (1, 5, COUNT):
        walked = api.walk(path, paging_org.admin, prop, limit=limit)
        assert _ids(walked) == _ids(everything), f"limit={limit}: a different order or set of items"
    assert len(set(_ids(everything))) == len(everything)


def test_approvals_come_newest_first(api, paging_org):
    approvals = api.walk("/approvals", paging_org.viewer, "approvals", limit=5)
    assert approvals[0]["id"] == paging_org.last_approval["id"]
    created = [a["createdAt"] for a in approvals]
    assert created == sorted(created, reverse=True)


def test_a_page_of_exactly_limit_items_may_be_the_last(api, paging_org):
    """The walk stops only on nextCursor null, whatever the page lengths."""
    total = len(api.walk("/approval-rule-groups", paging_org.admin, "approvalRuleGroups", limit=500))
    pages = list(api.pages("/approval-rule-groups", paging_org.admin, "approvalRuleGroups", limit=total))
    assert sum(len(p) for p in pages) == total
    assert all(len(p) <= total for p in pages)


# --- inserts and removals mid-walk ---------------------------------------------------------------------


def _walk_with(api, key, path, prop, mutate, limit=4):
    """Walk the list, calling ``mutate(seen_so_far)`` once after the first page."""
    seen, mutated = [], False
    for page in api.pages(path, key, prop, limit=limit):
        seen.extend(page)
        if not mutated:
            mutate(list(seen))
            mutated = True
    return seen


def _check_snapshot_walk(before: list[dict], seen: list[dict], removed: set[str], inserted: set[str]) -> None:
    counts = Counter(_ids(seen))
    duplicates = [i for i, n in counts.items() if n > 1]
    assert not duplicates, f"seen twice: {duplicates}"
    kept = set(_ids(before)) - removed
    missed = kept - set(counts)
    assert not missed, f"items present throughout the walk were missed: {missed}"
    assert set(counts) <= set(_ids(before)) | inserted


def test_products_walk_survives_inserts_and_removals(api, paging_org):
    viewer = paging_org.viewer  # a deactivated product leaves the view-only list: a removal
    before = api.walk("/products", viewer, "products", limit=500)
    removed, inserted = set(), set()

    def mutate(seen):
        behind, at_cursor, ahead = seen[1], seen[-1], before[-2]
        for product in (behind, at_cursor, ahead):
            assert product["id"] != paging_org.product["id"]  # the one the quotes below are priced with
            api.ok("PATCH", f"/products/{product['id']}", paging_org.admin, json={"active": False})
            removed.add(product["id"])
        inserted.add(data.product(api, paging_org.admin)["id"])

    seen = _walk_with(api, viewer, "/products", "products", mutate)
    _check_snapshot_walk(before, seen, removed, inserted)


def test_approval_rule_groups_walk_survives_deletes_and_inserts(api, paging_org):
    admin = paging_org.admin
    before = api.walk("/approval-rule-groups", admin, "approvalRuleGroups", limit=500)
    removed, inserted = set(), set()

    def mutate(seen):
        for group in (seen[-1], before[-1]):  # the cursor's own item and one ahead of it
            resp = api.delete(f"/approval-rule-groups/{group['id']}", admin)
            assert resp.status_code in (200, 204), resp.text[:300]
            removed.add(group["id"])
        inserted.add(data.approval_rule_group(api, admin)["id"])

    seen = _walk_with(api, admin, "/approval-rule-groups", "approvalRuleGroups", mutate)
    _check_snapshot_walk(before, seen, removed, inserted)


def test_quotes_walk_survives_inserts_and_removals_from_a_filter(api, paging_org):
    user = paging_org.user
    data.many(6, lambda: data.quote(api, user, lines=[data.line(paging_org.product["id"])]))
    before = api.walk("/pricing-quotes", user, "pricingQuotes", limit=500, params={"status": "DRAFT"})
    removed, inserted = set(), set()

    def mutate(seen):
        for quote in (seen[-1], before[-1]):  # submitted quotes leave the DRAFT list
            api.ok("POST", f"/pricing-quotes/{quote['id']}/approval", user, status=201)
            removed.add(quote["id"])
        inserted.add(data.quote(api, user)["id"])

    seen = []
    for page in api.pages("/pricing-quotes", user, "pricingQuotes", limit=3, params={"status": "DRAFT"}):
        seen.extend(page)
        if len(seen) == len(page):
            mutate(list(seen))
    _check_snapshot_walk(before, seen, removed, inserted)


def test_approval_groups_walk_survives_inserts(api, paging_org):
    admin = paging_org.admin
    before = api.walk("/approval-groups", admin, "approvalGroups", limit=500)
    inserted = set()

    def mutate(seen):
        inserted.update(g["id"] for g in data.many(2, lambda: data.approval_group(api, admin, [admin.user_id])))

    seen = _walk_with(api, admin, "/approval-groups", "approvalGroups", mutate)
    _check_snapshot_walk(before, seen, set(), inserted)


def test_approval_rules_walk_completes_despite_deletes_and_inserts(api, paging_org):
    """Resumes by position: an item ahead may be seen twice or missed, but the walk goes on to its end."""
    admin = paging_org.admin
    before = api.walk("/approval-rules", admin, "approvalRules", limit=500)
    removed, inserted = set(), set()

    def mutate(seen):
        for rule in (seen[-1], before[-1]):
            resp = api.delete(f"/approval-rules/{rule['id']}", admin)
            assert resp.status_code in (200, 204), resp.text[:300]
            removed.add(rule["id"])
        inserted.add(data.approval_rule(api, admin, paging_org.group["id"])["id"])

    seen = _walk_with(api, admin, "/approval-rules", "approvalRules", mutate)
    assert set(_ids(seen)) <= set(_ids(before)) | inserted
    assert len(set(_ids(seen))) >= len(before) - len(removed) - 1


def test_approvals_walk_completes_despite_inserts(api, paging_org):
    """Newest first and resumed by position: requests created mid-walk land ahead of the cursor."""
    before = api.walk("/approvals", paging_org.viewer, "approvals", limit=100)
    inserted = set()

    def mutate(seen):
        inserted.add(data.approval_request(api, paging_org.user, paging_org.product["id"])["id"])

    seen = _walk_with(api, paging_org.viewer, "/approvals", "approvals", mutate)
    assert set(_ids(seen)) <= set(_ids(before)) | inserted
    assert len(set(_ids(seen))) >= len(before) - 1
