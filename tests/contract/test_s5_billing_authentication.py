"""Spec section 5 for the billing connector: the same ``x-api-key`` and the same two 401 messages as
every endpoint; 403 naming the documented scope a role lacks (the connection is the admin's, as
the spec's connection flow says: "admin only"; a push is an admin's (not in the user role), who
works on other users' quotes; view-only keys push nothing); other organizations' quotes are not
found. The browser's callback and the platform's signed webhooks take no key."""

from __future__ import annotations

import uuid

import pytest

from contract_client import INVALID_KEY, MISSING_KEY, assert_problem
from contract_webhooks import wait_for

ID = "00000000-0000-7000-8000-000000000000"  # a well-formed id that names nothing
ROLES = ("view only", "user", "admin")
RANK = {role: i for i, role in enumerate(ROLES)}
# The least role that reaches each keyed operation of the connector.
ROLE_TABLE = [
    ("GET", "/billing-connection", "admin"),
    ("POST", "/billing-connection/authorize", "admin"),
    ("DELETE", "/billing-connection", "admin"),
    ("POST", f"/pricing-quotes/{ID}/billing-pushes", "admin"),  # not in the user role (spec section 5)
    ("GET", f"/pricing-quotes/{ID}/billing-pushes", "view only"),
    ("GET", f"/pricing-quotes/{ID}/billing-pushes/{ID}", "view only"),
    ("GET", "/billing-pushes", "view only"),
]
EXPECTED_SCOPES = {
    ("GET", "/billing-connection"): ["billing:manage"],
    ("POST", "/billing-connection/authorize"): ["billing:manage"],
    ("DELETE", "/billing-connection"): ["billing:manage"],
    ("POST", "/pricing-quotes/{quote_id}/billing-pushes"): ["billing:push"],
    ("GET", "/pricing-quotes/{quote_id}/billing-pushes"): ["quotes:read"],
    ("GET", "/pricing-quotes/{quote_id}/billing-pushes/{push_id}"): ["quotes:read"],
    ("GET", "/billing-pushes"): ["quotes:read"],
}


@pytest.fixture(scope="module")
def org(make_org):
    return make_org("Billing Auth Co")


@pytest.fixture(scope="module")
def connected(billing, org):
    billing.connect(org)
    return org


@pytest.fixture(scope="module")
def second_user(org):
    return org.member("user", f"billing-second-{uuid.uuid4().hex[:6]}@auth.example")


def _scope(billing, method: str, path: str) -> str:
    [scope] = billing.connector.operations[billing.connector.operation(method, path)]["x-required-scopes"]
    return scope


def test_each_operation_documents_the_scope_it_enforces(billing):
    documented = {op: body["x-required-scopes"] for op, body in billing.connector.operations.items()}
    assert {op: scopes for op, scopes in documented.items() if scopes} == EXPECTED_SCOPES


@pytest.mark.parametrize("method, path, least_role", ROLE_TABLE, ids=[f"{m} {p}" for m, p, _ in ROLE_TABLE])
def test_role_table(billing, org, method, path, least_role):
    scope = _scope(billing, method, path)
    for role, member in (("view only", org.viewer), ("user", org.user), ("admin", org.admin)):
        resp = billing.connector.call(method, path, member)
        if RANK[role] < RANK[least_role]:
            body = assert_problem(resp, 403)
            assert scope in body["detail"], f"{role}: 403 does not name {scope}: {body['detail']}"
        else:
            assert resp.status_code not in (401, 403), f"{role} refused {method} {path}: {resp.text[:300]}"


@pytest.mark.parametrize("method, path, _", ROLE_TABLE, ids=[f"{m} {p}" for m, p, _ in ROLE_TABLE])
def test_401_without_a_key_or_with_an_invalid_one(billing, method, path, _):
    assert assert_problem(billing.connector.call(method, path), 401)["detail"] == MISSING_KEY
    for bad in ("dps_nonexistent_secret", "not-a-key", "dps_" + "A" * 60):
        assert assert_problem(billing.connector.call(method, path, bad), 401)["detail"] == INVALID_KEY


def test_a_revoked_key_is_refused_by_the_connector_too(billing, org, admin):
    member = org.member("admin", f"billing-revoked-{uuid.uuid4().hex[:6]}@auth.example")
    assert billing.connector.get("/billing-connection", member).status_code in (200, 404)
    admin.revoke_key(member.key_row_id)

    def refused():
        resp = billing.connector.get("/billing-connection", member)
        return resp if resp.status_code == 401 else None  # the key cache lives 1 s in this suite

    assert assert_problem(wait_for(refused, "the revoked key refused"), 401)["detail"] == INVALID_KEY


def test_the_callback_and_the_platform_webhooks_take_no_key(billing):
    resp = billing.connector.get("/billing-connection/callback", params={"state": "x"})
    assert resp.status_code == 400 and resp.headers["content-type"].startswith("text/html")
    assert_problem(billing.connector.post("/billing-platform/webhooks", data=b"{}"), 400, "invalid_signature")


# --- who may push ----------------------------------------------------------------------------------


def test_a_user_key_cannot_push_even_its_own_quote(billing, connected, second_user):
    """Pushing is not in the user role of spec section 5 (admin: everything)."""
    for owner in (connected.user, second_user):
        quote = billing.simple_quote(connected, owner)
        body = assert_problem(billing.push(connected.user, quote["id"]), 403, "missing_scope")
        assert "billing:push" in body["detail"]
        assert billing.connector.ok("GET", billing.pushes_path(quote["id"]), connected.user)["billingPushes"] == []


def test_an_admin_pushes_any_quote_of_the_organization(billing, connected, second_user):
    theirs = billing.simple_quote(connected, second_user)
    resp = billing.push(connected.admin, theirs["id"])
    assert resp.status_code == 202
    assert resp.json()["requestedBy"] == connected.admin.user_id
    assert billing.wait_push(connected.admin, theirs["id"], resp.json()["id"])["status"] == "succeeded"


def test_a_view_only_key_cannot_push_but_reads_the_pushes(billing, connected):
    quote = billing.simple_quote(connected, connected.user)
    body = assert_problem(billing.push(connected.viewer, quote["id"]), 403)
    assert "billing:push" in body["detail"]
    pushed = billing.pushed(connected.admin, quote["id"])
    listed = billing.connector.ok("GET", billing.pushes_path(quote["id"]), connected.viewer)["billingPushes"]
    assert [p["id"] for p in listed] == [pushed["id"]]
    assert billing.read_push(connected.viewer, quote["id"], pushed["id"])["status"] == "succeeded"


# --- organization scoping --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def foreign(billing, make_org):
    """Another organization, connected, with a quote pushed."""
    other = make_org("Billing Foreign Co")
    billing.connect(other)
    quote = billing.simple_quote(other, other.user)
    return other, quote, billing.pushed(other.admin, quote["id"])


def test_another_organizations_quote_cannot_be_pushed(billing, connected, foreign):
    _, quote, _ = foreign
    body = assert_problem(billing.push(connected.admin, quote["id"]), 404)
    assert quote["id"] not in str(body)


def test_another_organizations_pushes_are_not_found(billing, connected, foreign):
    _, quote, push = foreign
    assert_problem(billing.connector.get(f"{billing.pushes_path(quote['id'])}/{push['id']}", connected.admin), 404)
    assert_problem(billing.connector.get(billing.pushes_path(quote["id"]), connected.admin), 404)


def test_an_organization_id_in_the_request_is_ignored(billing, connected, foreign):
    other, quote, _ = foreign
    resp = billing.connector.post(billing.pushes_path(quote["id"]), connected.admin,
                                  params={"organizationId": other.id}, json={"organizationId": other.id},
                                  headers={"X-Organization-Id": other.id})
    assert_problem(resp, 404)
    assert billing.connection(connected)["accountId"] != billing.connection(other)["accountId"]


def test_the_document_says_only_an_admin_pushes(billing):
    """The reference said the quote's owner could push too (403 ``not_quote_owner`` otherwise); an
    owner with a user key gets 403 ``missing_scope``, as above."""
    [push] = [op for (method, path), op in billing.connector.operations.items()
              if (method, path) == ("POST", "/pricing-quotes/{quote_id}/billing-pushes")]
    assert "An admin's key only" in push["description"] and "missing_scope" in push["description"]
    assert "not_quote_owner" not in push["description"] and "owns the quote" not in push["description"]
