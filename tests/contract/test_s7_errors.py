"""Spec section 7: 400 for a limit out of range and for a cursor the service did not issue; 401; 403;
413 for a body over 10 MB (declared by Content-Length or streamed chunked), answered without reading
the whole body; unknown fields never an error. Every error is a problem-details body carrying a
stable ``code`` and the ``requestId`` of the ``X-Request-Id`` response header."""

from __future__ import annotations

import base64

import pytest
import requests

import contract_data as data
from contract_client import INVALID_KEY, MISSING_KEY, assert_problem, post_head, raw_exchange, status_and_body

TEN_MB = 10 * 1024 * 1024


@pytest.fixture(scope="module")
def products(api, org):
    """Enough products for a cursor; the list also has other tests' products, which does no harm."""
    return [data.product(api, org.admin) for _ in range(3)]


def _cursor(api, key, path, params=None) -> str:
    body = api.ok("GET", path, key, params={"limit": 1, **(params or {})})
    assert body["nextCursor"], f"{path} has a single page; the test needs two"
    return body["nextCursor"]


# --- 400 ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["0", "501", "-1", "abc", "1.5", "100000000000000000000"])
def test_limit_outside_the_range_is_400(api, org, limit):
    body = assert_problem(api.get("/products", org.viewer, params={"limit": limit}), 400)
    assert "limit" in body["detail"]


def test_forged_cursors_are_400(api, org, products):
    forged = base64.urlsafe_b64encode(b'["00000000-0000-7000-8000-000000000000"]').decode().rstrip("=")
    for cursor in ("abc", "abc.def", forged, forged + ".", forged + ".AAAAAAAAAAAAAAAAAAAAAAAA", "%00", "." * 10):
        body = assert_problem(api.get("/products", org.viewer, params={"cursor": cursor}), 400)
        assert "cursor" in body["detail"].lower(), body


def test_tampered_cursor_is_400(api, org, products):
    cursor = _cursor(api, org.viewer, "/products")
    for i in (0, len(cursor) // 2, len(cursor) - 1):
        flipped = cursor[:i] + ("A" if cursor[i] != "A" else "B") + cursor[i + 1 :]
        assert_problem(api.get("/products", org.viewer, params={"cursor": flipped}), 400)
    assert_problem(api.get("/products", org.viewer, params={"cursor": cursor + "x"}), 400)
    assert api.get("/products", org.viewer, params={"cursor": cursor}).status_code == 200  # the original still works


def test_cursor_from_another_endpoint_is_400(api, org, products):
    data.approval_group(api, org.admin, [org.admin.user_id])
    data.approval_group(api, org.admin, [org.admin.user_id])
    product_cursor = _cursor(api, org.admin, "/products")
    group_cursor = _cursor(api, org.admin, "/approval-groups")
    for path in ("/pricing-quotes", "/approval-groups", "/approval-rules", "/approval-rule-groups", "/approvals"):
        assert_problem(api.get(path, org.admin, params={"cursor": product_cursor}), 400)
    assert_problem(api.get("/products", org.admin, params={"cursor": group_cursor}), 400)


def test_cursor_from_another_filter_is_400(api, org, products):
    cursor = _cursor(api, org.admin, "/products", {"active": "true"})
    assert api.get("/products", org.admin, params={"active": "true", "cursor": cursor}).status_code == 200
    assert_problem(api.get("/products", org.admin, params={"active": "false", "cursor": cursor}), 400)
    assert_problem(api.get("/products", org.admin, params={"cursor": cursor}), 400)


def test_cursor_survives_a_different_page_size(api, org, products):
    """limit is the page size, not a filter: the walk may change it between pages."""
    cursor = _cursor(api, org.viewer, "/products")
    assert api.get("/products", org.viewer, params={"cursor": cursor, "limit": 2}).status_code == 200


# --- 401 / 403 ---------------------------------------------------------------------------------------


def test_401_problem_details(api):
    assert assert_problem(api.get("/whoami"), 401)["detail"] == MISSING_KEY
    assert assert_problem(api.get("/whoami", "dps_nope_nope"), 401)["detail"] == INVALID_KEY


def test_403_problem_details_name_the_scope(api, org):
    body = assert_problem(api.get("/approval-rules", org.viewer), 403)
    assert "approval-rules:read" in body["detail"]
    body = assert_problem(api.post("/products", org.user, json={}), 403)
    assert "products:write" in body["detail"]


# --- 413 ---------------------------------------------------------------------------------------------


def test_413_by_content_length_before_the_body_is_read(api, org):
    """Content-Length says 11 MB; only 64 KB are sent. The answer can only come back if the server
    refused on the declared length without waiting for the body."""
    answer = raw_exchange(api, post_head("/opportunities", org.admin.key, f"Content-Length: {11 * 1024 * 1024}"), [b" " * 65536])
    status, body = status_and_body(answer)
    assert status == 413, answer[:500]
    assert b'"code"' in body


def test_413_for_a_chunked_body_over_10_mb_without_reading_it_all(api, org):
    """10 MB + 512 KB sent chunked and the terminating chunk never sent: the server must stop
    reading past the limit and answer, not wait for the end of the body."""
    chunk = b" " * 65536
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    parts = [framed] * (TEN_MB // len(chunk) + 8)
    status, body = status_and_body(raw_exchange(api, post_head("/opportunities", org.admin.key, "Transfer-Encoding: chunked"), parts))
    assert status == 413
    assert b'"code"' in body


def test_413_with_requests_chunked_generator(api, org):
    def body():
        for _ in range(TEN_MB // 65536 + 16):
            yield b" " * 65536

    resp = _post_oversized(api, org, body())
    assert_problem(resp, 413)


def _post_oversized(api, org, body):
    try:
        return api.post("/opportunities", org.admin, data=body, headers={"Content-Type": "application/json"})
    except requests.ConnectionError as exc:  # the server closed mid-upload without an answer we could read
        pytest.fail(f"no 413 answer readable by the client: {exc}")


def test_a_body_of_exactly_10_mb_is_not_413(api, org):
    """The limit is 10 MB: a body at the limit is read and judged on its content (here: not JSON)."""
    resp = api.post("/opportunities", org.admin, data=b" " * (TEN_MB - 2) + b"{}", headers={"Content-Type": "application/json"})
    assert resp.status_code != 413, resp.text[:300]
    assert resp.status_code == 400  # {} lacks the required fields


# --- problem details ---------------------------------------------------------------------------------


def test_every_error_is_problem_details_with_code_and_request_id(api, org):
    responses = [
        api.get("/products", org.viewer, params={"limit": "0"}),
        api.get("/whoami"),
        api.get("/approval-rules", org.user),
        api.get("/products/00000000-0000-7000-8000-000000000000", org.admin),
        api.post("/opportunities", org.admin, json={"name": ""}),
        api.post("/opportunities", org.admin, data=b"{not json", headers={"Content-Type": "application/json"}),
        api.get("/no-such-endpoint", org.admin),
    ]
    ids = set()
    for resp in responses:
        assert resp.status_code >= 400
        body = assert_problem(resp, resp.status_code)
        assert body["title"] and body["detail"]
        ids.add(body["requestId"])
    assert len(ids) == len(responses)  # one id per request


def test_validation_error_names_the_field(api, org):
    body = assert_problem(api.post("/opportunities", org.admin, json={"name": "Deal"}), 400)
    assert "accountName" in str(body)


def test_request_id_is_on_successes_too(api, org):
    resp = api.get("/whoami", org.viewer)
    assert resp.status_code == 200 and resp.headers["X-Request-Id"]


# --- unknown fields ----------------------------------------------------------------------------------


def test_a_misspelled_field_is_dropped_silently(api, org):
    opportunity = data.opportunity(api, org.admin, accountName="Initech")
    resp = api.patch(f"/opportunities/{opportunity['id']}", org.user, json={"acountName": "Typo Inc", "name": "Renamed"})
    assert resp.status_code == 200, resp.text[:500]
    assert resp.json()["accountName"] == "Initech"
    assert resp.json()["name"] == "Renamed"
