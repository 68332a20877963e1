"""GET /approvals: newest first, status filter, keyset walk, limit bounds, foreign cursors, and the
deprecated offset/count parameters answered with a Deprecation header."""

from __future__ import annotations

import pytest

from dps_common.openapi.components import inline_refs

from approval_helpers import (
    APPROVALS,
    TERM_ABOVE_24,
    V1,
    approval_group,
    product,
    quote,
    recall,
    rule,
    submit,
)


@pytest.fixture
def five_requests(client, org):
    """Five requests, oldest first: APPROVED, PENDING, APPROVED, RECALLED, PENDING."""
    rule(client, org, approval_group(client, org, [org.admin]), TERM_ABOVE_24)
    item = product(client, org)["id"]
    made = []
    for term in (12, 36, 12, 36, 36):
        made.append(submit(client, org.user, quote(client, org.user, item, term=term)["id"]))
    assert recall(client, org.user, made[3]["quoteId"]).status_code == 200
    return [a["id"] for a in made]


def walk(client, org, params, limit):
    seen, cursor = [], None
    while True:
        query = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
        resp = client.simulate_get(APPROVALS, params=query, headers=org.viewer.headers)
        assert resp.status_code == 200
        assert len(resp.json["approvals"]) <= limit
        seen += [a["id"] for a in resp.json["approvals"]]
        cursor = resp.json["nextCursor"]
        if cursor is None:
            return seen


def test_list_is_newest_first_with_status_filter_and_walks(client, org, five_requests):
    newest_first = list(reversed(five_requests))
    first = client.simulate_get(APPROVALS, headers=org.viewer.headers)
    assert [a["id"] for a in first.json["approvals"]] == newest_first
    assert first.json["nextCursor"] is None
    assert "Deprecation" not in first.headers
    assert walk(client, org, {}, 2) == newest_first
    assert walk(client, org, {"status": "PENDING"}, 1) == [five_requests[4], five_requests[1]]
    recalled = client.simulate_get(APPROVALS, params={"status": "RECALLED"}, headers=org.viewer.headers).json
    assert [a["id"] for a in recalled["approvals"]] == [five_requests[3]]
    quote_id = recalled["approvals"][0]["quoteId"]
    by_quote = client.simulate_get(APPROVALS, params={"quoteId": quote_id}, headers=org.viewer.headers)
    assert [a["id"] for a in by_quote.json["approvals"]] == [five_requests[3]]
    bad_status = client.simulate_get(APPROVALS, params={"status": "DONE"}, headers=org.viewer.headers)
    assert bad_status.status_code == 400 and bad_status.json["errors"][0]["field"] == "status"


def test_list_limit_bounds_and_foreign_cursors(client, app, org, five_requests):
    for limit in ("0", "101", "-1", "ten"):
        resp = client.simulate_get(APPROVALS, params={"limit": limit}, headers=org.viewer.headers)
        assert resp.status_code == 400 and resp.json["code"] == "invalid_limit"
    assert client.simulate_get(APPROVALS, params={"limit": "100"}, headers=org.viewer.headers).status_code == 200
    cursor = client.simulate_get(APPROVALS, params={"limit": 1}, headers=org.viewer.headers).json["nextCursor"]
    # a cursor is bound to its filters, and to this list
    other_filter = client.simulate_get(
        APPROVALS, params={"cursor": cursor, "status": "PENDING"}, headers=org.viewer.headers
    )
    assert other_filter.status_code == 400 and other_filter.json["code"] == "invalid_cursor"
    foreign = app.context.cursors.encode("/external/v1/approval-rules?", [five_requests[0]])
    for bad in (foreign, "garbage"):
        resp = client.simulate_get(APPROVALS, params={"cursor": bad}, headers=org.viewer.headers)
        assert resp.status_code == 400 and resp.json["code"] == "invalid_cursor"


def test_deprecated_offset_and_count_still_work_and_say_so(client, org, five_requests):
    newest_first = list(reversed(five_requests))
    resp = client.simulate_get(APPROVALS, params={"offset": 1, "count": 2}, headers=org.viewer.headers)
    assert resp.status_code == 200
    assert [a["id"] for a in resp.json["approvals"]] == newest_first[1:3]
    assert resp.headers["Deprecation"] == "@1767225600"
    assert 'rel="deprecation"' in resp.headers["Link"]
    rest = client.simulate_get(APPROVALS, params={"cursor": resp.json["nextCursor"]}, headers=org.viewer.headers)
    assert [a["id"] for a in rest.json["approvals"]] == newest_first[3:]
    assert "Deprecation" not in rest.headers

    only_offset = client.simulate_get(APPROVALS, params={"offset": 4}, headers=org.viewer.headers)
    assert [a["id"] for a in only_offset.json["approvals"]] == newest_first[4:]
    assert only_offset.json["nextCursor"] is None and only_offset.headers["Deprecation"] == "@1767225600"
    pending = {"count": 3, "status": "PENDING"}
    only_count = client.simulate_get(APPROVALS, params=pending, headers=org.viewer.headers)
    assert [a["id"] for a in only_count.json["approvals"]] == [five_requests[4], five_requests[1]]
    assert "Deprecation" in only_count.headers
    beyond = client.simulate_get(APPROVALS, params={"offset": 50}, headers=org.viewer.headers)
    assert beyond.json == {"approvals": [], "nextCursor": None}

    cursor = resp.json["nextCursor"]
    for params, field in (
        ({"offset": 1, "cursor": cursor}, "offset"),
        ({"count": 2, "limit": 2}, "count"),
        ({"count": 0}, "count"),
        ({"count": 101}, "count"),
        ({"offset": -1}, "offset"),
        ({"offset": "x"}, "offset"),
    ):
        bad = client.simulate_get(APPROVALS, params=params, headers=org.viewer.headers)
        assert bad.status_code == 400, params
        assert bad.json["errors"][0]["field"] == field


def test_offset_and_count_are_documented_as_deprecated(client):
    doc = inline_refs(client.simulate_get(f"{V1}/openapi.json").json)
    params = {p["name"]: p for p in doc["paths"]["/approvals"]["get"]["parameters"]}
    assert params["offset"].get("deprecated") is True and params["count"].get("deprecated") is True
    assert params["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    assert "deprecated" not in params["status"]
