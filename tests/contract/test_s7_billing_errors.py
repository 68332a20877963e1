"""Spec section 7 for the billing connector: every error is problem details (``type``, ``title``,
``status``, ``detail``, ``code``, ``requestId``), with the status the condition calls for; unknown
request fields never produce an error; a body over 10 MB is 413. Then the connector's own refusals,
each with its code: a quote that is not approved, no connection, a broken connection (the platform
revoked the grant behind the service's back), an unknown quote or push, the platform unreachable
on disconnect (the connection kept)."""

from __future__ import annotations

import json

import pytest

import contract_data as data
from contract_client import assert_problem, post_head, raw_exchange, status_and_body

ID = "00000000-0000-7000-8000-000000000000"
PROBLEM_FIELDS = {"type", "title", "status", "detail", "code", "requestId"}


@pytest.fixture(scope="module")
def org(make_org, billing):
    org = make_org("Billing Errors Co")
    billing.connect(org)
    return org


def _problem(resp, status: int, code: str | None = None) -> dict:
    body = assert_problem(resp, status, code)
    assert set(body) >= PROBLEM_FIELDS
    assert body["detail"] and body["title"] and body["type"]
    return body


def test_a_quote_that_is_not_approved_is_refused(billing, org):
    product = billing.product(org)
    draft = data.quote(billing.api, org.user, lines=[data.line(product["id"])])
    body = _problem(billing.push(org.admin, draft["id"]), 409, "quote_not_approved")
    assert "DRAFT" in body["detail"]
    assert billing.connector.ok("GET", billing.pushes_path(draft["id"]), org.user)["billingPushes"] == []


def test_without_a_connection_a_push_is_refused(billing, make_org):
    unconnected = make_org("Billing Unconnected Co")
    quote = billing.simple_quote(unconnected)
    body = _problem(billing.push(unconnected.admin, quote["id"]), 409, "billing_not_connected")
    assert "POST /billing-connection/authorize" in body["detail"]
    _problem(billing.connector.get("/billing-connection", unconnected.admin), 404, "billing_not_connected")
    _problem(billing.connector.delete("/billing-connection", unconnected.admin), 404, "billing_not_connected")


@pytest.mark.parametrize("quote_id", [ID, "not-a-uuid", "1"])
def test_an_unknown_quote_is_not_found(billing, org, quote_id):
    _problem(billing.push(org.admin, quote_id), 404)
    _problem(billing.connector.get(billing.pushes_path(quote_id), org.user), 404)
    _problem(billing.connector.get(f"{billing.pushes_path(quote_id)}/{ID}", org.user), 404)


def test_an_unknown_push_of_a_known_quote_is_not_found(billing, org):
    quote = billing.simple_quote(org)
    push = billing.pushed(org.admin, quote["id"])
    other = billing.simple_quote(org)
    for path in (f"{billing.pushes_path(quote['id'])}/{ID}", f"{billing.pushes_path(quote['id'])}/nope",
                 f"{billing.pushes_path(other['id'])}/{push['id']}"):  # a push belongs to its quote
        _problem(billing.connector.get(path, org.user), 404)


def test_unknown_request_fields_are_dropped(billing, org):
    quote = billing.simple_quote(org)
    resp = billing.connector.post(billing.pushes_path(quote["id"]), org.admin,
                                  json={"dryRun": True, "organizationId": ID, "lines": []})
    assert resp.status_code == 202, resp.text
    assert billing.wait_push(org.user, quote["id"], resp.json()["id"])["status"] == "succeeded"


def test_a_body_over_10_mb_is_413_before_it_is_read(billing, org):
    """Content-Length says 11 MB; only 64 KB are sent: the answer comes only from a refusal on the
    declared length."""
    quote = billing.simple_quote(org)
    head = post_head(billing.pushes_path(quote["id"]), org.admin.key, f"Content-Length: {11 * 1024 * 1024}")
    status, body = status_and_body(raw_exchange(billing.connector, head, [b" " * 65536]))
    assert status == 413
    problem = json.loads(body)
    assert (problem["status"], problem["code"]) == (413, "payload_too_large")
    assert billing.connector.ok("GET", billing.pushes_path(quote["id"]), org.user)["billingPushes"] == []


def test_the_platform_unreachable_on_disconnect_is_502_and_the_connection_is_kept(billing, org):
    account = billing.connection(org)["accountId"]
    down = billing.stand_in.faults.add(path_prefix="/v1/oauth/deauthorize", status=503)
    try:
        body = _problem(billing.connector.delete("/billing-connection", org.admin), 502,
                        "billing_platform_unavailable")
        assert "kept" in body["detail"]
    finally:
        billing.stand_in.faults.remove(down)
    assert billing.connection(org)["accountId"] == account
    assert account in billing.stand_in.installed_accounts()


def test_a_grant_revoked_on_the_platform_breaks_the_connection_and_refuses_pushes(billing, make_org):
    """The platform revokes the grant and its webhook never arrives: the next push finds the access
    token refused, the refresh refused (``invalid_grant``), and the connection broken; pushes are
    then refused until an admin connects again."""
    broken = make_org("Billing Broken Co")
    account = billing.connect(broken)["accountId"]
    quote = billing.simple_quote(broken)
    billing.stand_in.webhook_url = None  # the uninstall event is lost on its way
    try:
        billing.stand_in.uninstall(account)
        billing.stand_in.wait_for_webhooks(timeout=30)
    finally:
        billing.stand_in.webhook_url = billing.connector.origin + "/external/v1/billing-platform/webhooks"
    failed = billing.pushed(broken.admin, quote["id"])
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "billing_connection_broken"
    connection = billing.connection(broken)
    assert connection["status"] == "broken" and connection["brokenReason"]
    _problem(billing.push(broken.admin, quote["id"]), 409, "billing_connection_broken")
    reconnected = billing.connect(broken)
    assert reconnected["status"] == "connected"
    assert billing.pushed(broken.admin, quote["id"])["status"] == "succeeded"
