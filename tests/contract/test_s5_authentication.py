"""Spec section 5: the organization API key in ``x-api-key`` and nothing else; the two 401 messages
to the letter; 403 naming the scope a role lacks; the role table (view only / user / admin); the
key acting as its user; organization ids in requests ignored; other organizations' objects 404."""

from __future__ import annotations

import time
import uuid

import pytest

import contract_data as data
from contract_client import INVALID_KEY, MISSING_KEY, assert_problem

ROLES = ("view only", "user", "admin")
RANK = {role: i for i, role in enumerate(ROLES)}

# The spec's role table, endpoint by endpoint: the least role that reaches each operation.
# view only: reads of opportunities, quotes, products, pricebooks, approval groups, deal groups, approvals.
# user: + creating/editing quotes, updating opportunities, submitting and recalling approvals.
# admin: everything (products, cost, deal-group changes, approval rules and approval configuration, ...).
ID = "00000000-0000-7000-8000-000000000000"  # a well-formed id that names nothing
ROLE_TABLE = [
    ("GET", "/products", "view only"),
    ("GET", f"/products/{ID}", "view only"),
    ("POST", "/products", "admin"),
    ("PATCH", f"/products/{ID}", "admin"),
    ("GET", "/pricebooks", "view only"),
    ("GET", f"/pricebooks/{ID}", "view only"),
    ("POST", "/pricebooks", "admin"),
    ("PATCH", f"/pricebooks/{ID}", "admin"),
    ("GET", "/opportunities", "view only"),
    ("GET", f"/opportunities/{ID}", "view only"),
    ("POST", "/opportunities", "admin"),  # users update opportunities; creating is not in their reach
    ("PATCH", f"/opportunities/{ID}", "user"),
    ("POST", f"/opportunities/{ID}/closed-won", "admin"),
    ("GET", f"/deal-groups?opportunityId={ID}", "view only"),
    ("GET", f"/deal-groups/{ID}", "view only"),
    ("POST", "/deal-groups", "admin"),
    ("PATCH", f"/deal-groups/{ID}", "admin"),
    ("GET", "/pricing-quotes", "view only"),
    ("GET", f"/pricing-quotes/{ID}", "view only"),
    ("POST", "/pricing-quotes", "user"),
    ("PATCH", f"/pricing-quotes/{ID}", "user"),
    ("POST", f"/pricing-quotes/{ID}/approval", "user"),
    ("DELETE", f"/pricing-quotes/{ID}/approval", "user"),
    ("GET", "/approval-groups", "view only"),
    ("GET", f"/approval-groups/{ID}", "view only"),
    ("POST", "/approval-groups", "admin"),
    ("PATCH", f"/approval-groups/{ID}", "admin"),
    ("GET", "/approval-rules", "admin"),
    ("GET", f"/approval-rules/{ID}", "admin"),
    ("POST", "/approval-rules", "admin"),
    ("PATCH", f"/approval-rules/{ID}", "admin"),
    ("DELETE", f"/approval-rules/{ID}", "admin"),
    ("GET", "/approval-rule-groups", "admin"),
    ("GET", f"/approval-rule-groups/{ID}", "admin"),
    ("POST", "/approval-rule-groups", "admin"),
    ("GET", "/approvals", "view only"),
    ("GET", f"/approvals/{ID}", "view only"),
]


def _body(method: str) -> dict:
    return {"json": {}} if method in ("POST", "PATCH", "PUT") else {}


# --- the header ------------------------------------------------------------------------------------


def test_key_in_x_api_key_header_is_accepted_in_any_letter_case(api, org):
    for header in ("x-api-key", "X-API-Key", "X-Api-Key"):
        assert api.get("/whoami", headers={header: org.viewer.key}).status_code == 200


def test_absent_header_gives_the_spec_message(api):
    body = assert_problem(api.get("/whoami"), 401)
    assert body["detail"] == MISSING_KEY


@pytest.mark.parametrize(
    "headers, params",
    [
        ({"Authorization": "Bearer {key}"}, {}),
        ({"Authorization": "{key}"}, {}),
        ({"api-key": "{key}"}, {}),
        ({"x-api-token": "{key}"}, {}),
        ({}, {"x-api-key": "{key}"}),
        ({}, {"api_key": "{key}"}),
    ],
    ids=["bearer", "authorization", "api-key", "x-api-token", "query-x-api-key", "query-api_key"],
)
def test_key_anywhere_but_x_api_key_is_no_key_at_all(api, org, headers, params):
    fill = lambda d: {k: v.format(key=org.admin.key) for k, v in d.items()}  # noqa: E731
    body = assert_problem(api.get("/whoami", headers=fill(headers), params=fill(params)), 401)
    assert body["detail"] == MISSING_KEY


@pytest.mark.parametrize(
    "key",
    [
        "not-a-key",
        "dps_",
        "dps_abc",
        "dps__secret",
        "sk_live_0123456789",
        "dps_unknownkeyid_" + "A" * 43,
        "",
        "dps_abc_\u00e9t\u00e9",
        "dps_" + "x" * 300,
    ],
)
def test_unknown_or_malformed_key_is_invalid(api, key):
    body = assert_problem(api.get("/whoami", headers={"x-api-key": key}), 401)
    assert body["detail"] == INVALID_KEY


def test_known_key_id_with_a_wrong_secret_is_invalid(api, org):
    prefix, _, secret = org.admin.key.rpartition("_")
    wrong = prefix + "_" + ("B" if secret[0] != "B" else "C") + secret[1:]
    body = assert_problem(api.get("/whoami", headers={"x-api-key": wrong}), 401)
    assert body["detail"] == INVALID_KEY


def test_revoked_key_is_invalid(api, admin, fresh_member):
    member = fresh_member("user")
    admin.revoke_key(member.key_row_id)
    deadline = time.monotonic() + 8
    while (resp := api.get("/whoami", member)).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert assert_problem(resp, 401)["detail"] == INVALID_KEY


def test_401_on_every_endpoint_without_a_key(api):
    for method, path, _ in ROLE_TABLE:
        body = assert_problem(api.call(method, path, **_body(method)), 401)
        assert body["detail"] == MISSING_KEY, f"{method} {path}"


# --- scopes and the role table ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def required_scopes(api) -> dict[tuple[str, str], list[str]]:
    document = api.ok("GET", "/openapi.json", None)
    return {
        (method.upper(), path): op.get("x-required-scopes", [])
        for path, item in document["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict)
    }


def _template(path: str) -> str:
    """``/products/<id>?x=y`` -> ``/products/{...}`` as the OpenAPI document spells it."""
    return path.split("?")[0]


def _documented_scope(required_scopes, method: str, path: str) -> str:
    concrete = _template(path).strip("/").split("/")
    for (doc_method, doc_path), scopes in required_scopes.items():
        parts = doc_path.strip("/").split("/")
        if doc_method == method and len(parts) == len(concrete) and all(
            p == c or p.startswith("{") for p, c in zip(parts, concrete)
        ):
            assert scopes, f"{method} {doc_path} documents no required scope"
            return scopes[0]
    raise AssertionError(f"{method} {_template(path)} is not in the OpenAPI document")


@pytest.mark.parametrize("method, path, least_role", ROLE_TABLE, ids=[f"{m} {p}" for m, p, _ in ROLE_TABLE])
def test_role_table(api, org, required_scopes, method, path, least_role):
    scope = _documented_scope(required_scopes, method, path)
    for role, member in (("view only", org.viewer), ("user", org.user), ("admin", org.admin)):
        resp = api.call(method, path, member, **_body(method))
        if RANK[role] < RANK[least_role]:
            body = assert_problem(resp, 403)
            assert scope in body["detail"], f"{role}: 403 does not name {scope}: {body['detail']}"
        else:
            assert resp.status_code not in (401, 403), f"{role} refused {method} {path}: {resp.text[:300]}"


def test_view_only_keys_can_do_no_write_at_all(api, org, required_scopes):
    writes = [(m, p) for (m, p) in required_scopes if m not in ("GET", "HEAD", "OPTIONS")]
    assert writes
    for method, doc_path in writes:
        path = "/".join(ID if part.startswith("{") else part for part in doc_path.split("/"))
        resp = api.call(method, path, org.viewer, json={})
        body = assert_problem(resp, 403)
        assert required_scopes[(method, doc_path)][0] in body["detail"], f"{method} {doc_path}"


def test_product_reads_widen_with_the_admin_scope(api, org):
    product = data.product(api, org.admin, cost={"USD": "40.00"})
    admin_view = api.ok("GET", f"/products/{product['id']}", org.admin)
    assert admin_view["cost"] == {"USD": "40.00"}
    for member in (org.user, org.viewer):
        assert "cost" not in api.ok("GET", f"/products/{product['id']}", member)


# --- the key acts as its user ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def second_user(org):
    return org.member("user", f"second-user-{uuid.uuid4().hex[:6]}@acme.example")


def test_created_objects_belong_to_the_keys_user(api, org):
    quote = data.quote(api, org.user)
    assert quote["ownerUserId"] == org.user.user_id
    opportunity = data.opportunity(api, org.admin)
    assert opportunity["ownerUserId"] == org.admin.user_id


def test_user_edits_own_quotes_but_not_another_users(api, org, second_user):
    mine = data.quote(api, org.user)
    theirs = data.quote(api, second_user)
    assert api.ok("PATCH", f"/pricing-quotes/{mine['id']}", org.user, json={"name": "Renamed by owner"})["name"] == "Renamed by owner"
    resp = api.patch(f"/pricing-quotes/{theirs['id']}", org.user, json={"name": "Hijacked"})
    assert_problem(resp, 403)
    assert api.ok("GET", f"/pricing-quotes/{theirs['id']}", org.user)["name"] == theirs["name"]


def test_user_cannot_submit_another_users_quote_for_approval(api, org, second_user):
    theirs = data.quote(api, second_user)
    assert_problem(api.post(f"/pricing-quotes/{theirs['id']}/approval", org.user), 403)


def test_admin_works_on_other_users_quotes(api, org, second_user):
    theirs = data.quote(api, second_user)
    edited = api.ok("PATCH", f"/pricing-quotes/{theirs['id']}", org.admin, json={"name": "Edited by admin"})
    assert edited["name"] == "Edited by admin"
    assert edited["ownerUserId"] == second_user.user_id


def test_every_role_reads_every_quote_of_the_organization(api, org, second_user):
    theirs = data.quote(api, second_user)
    for member in (org.viewer, org.user, org.admin):
        assert api.ok("GET", f"/pricing-quotes/{theirs['id']}", member)["id"] == theirs["id"]


# --- organization scoping --------------------------------------------------------------------------


def test_organization_id_in_query_or_header_is_ignored(api, org, other_org):
    for kwargs in (
        {"params": {"organizationId": other_org.id}},
        {"params": {"organization_id": other_org.id, "org": other_org.id}},
        {"headers": {"X-Organization-Id": other_org.id}},
    ):
        assert api.ok("GET", "/whoami", org.viewer, **kwargs) == {"organization": {"id": org.id, "name": org.name}}


def test_organization_id_in_a_body_is_ignored(api, org, other_org):
    created = data.opportunity(api, org.admin, organizationId=other_org.id, organization_id=other_org.id)
    assert api.ok("GET", f"/opportunities/{created['id']}", org.viewer)["id"] == created["id"]
    assert_problem(api.get(f"/opportunities/{created['id']}", other_org.admin), 404)
    product = data.product(api, org.admin, organizationId=other_org.id)
    assert_problem(api.get(f"/products/{product['id']}", other_org.admin), 404)


def test_lists_hold_only_the_keys_organization(api, org, other_org):
    ours = data.product(api, org.admin)
    theirs = data.product(api, other_org.admin)
    ids = {p["id"] for p in api.walk("/products", org.admin, "products", limit=500, params={"organizationId": other_org.id})}
    assert ours["id"] in ids and theirs["id"] not in ids


@pytest.fixture(scope="module")
def foreign(api, other_org):
    """One object of each kind in another organization."""
    product = data.product(api, other_org.admin)
    opportunity = data.opportunity(api, other_org.admin)
    group = data.approval_group(api, other_org.admin, [other_org.admin.user_id])
    return {
        "product": product,
        "opportunity": opportunity,
        "deal_group": data.deal_group(api, other_org.admin, [opportunity["id"]]),
        "quote": data.quote(api, other_org.user),
        "approval_group": group,
        "approval_rule": data.approval_rule(api, other_org.admin, group["id"]),
        "approval_rule_group": data.approval_rule_group(api, other_org.admin),
    }


FOREIGN_READS = [
    ("product", "/products/{id}"),
    ("opportunity", "/opportunities/{id}"),
    ("deal_group", "/deal-groups/{id}"),
    ("opportunity", "/deal-groups?opportunityId={id}"),
    ("quote", "/pricing-quotes/{id}"),
    ("approval_group", "/approval-groups/{id}"),
    ("approval_rule", "/approval-rules/{id}"),
    ("approval_rule_group", "/approval-rule-groups/{id}"),
]
FOREIGN_WRITES = [
    ("PATCH", "product", "/products/{id}", {"name": "Taken over"}),
    ("PATCH", "opportunity", "/opportunities/{id}", {"name": "Taken over"}),
    ("POST", "opportunity", "/opportunities/{id}/closed-won", None),
    ("PATCH", "deal_group", "/deal-groups/{id}", {"name": "Taken over"}),
    ("PATCH", "quote", "/pricing-quotes/{id}", {"name": "Taken over"}),
    ("POST", "quote", "/pricing-quotes/{id}/approval", None),
    ("PATCH", "approval_group", "/approval-groups/{id}", {"name": "Taken over"}),
    ("PATCH", "approval_rule", "/approval-rules/{id}", {"name": "Taken over"}),
    ("DELETE", "approval_rule", "/approval-rules/{id}", None),
    ("PATCH", "approval_rule_group", "/approval-rule-groups/{id}", {"name": "Taken over"}),
]


@pytest.mark.parametrize("kind, path", FOREIGN_READS, ids=[p for _, p in FOREIGN_READS])
def test_another_organizations_objects_are_not_found(api, org, foreign, kind, path):
    url = path.format(id=foreign[kind]["id"])
    body = assert_problem(api.get(url, org.admin), 404)
    assert foreign[kind]["id"] not in str(body)


@pytest.mark.parametrize("method, kind, path, body", FOREIGN_WRITES, ids=[f"{m} {p}" for m, _, p, _ in FOREIGN_WRITES])
def test_another_organizations_objects_cannot_be_changed(api, org, other_org, foreign, method, kind, path, body):
    url = path.format(id=foreign[kind]["id"])
    assert_problem(api.call(method, url, org.admin, **({"json": body} if body is not None else {})), 404)
    reread = path.split("?")[0].format(id=foreign[kind]["id"]).removesuffix("/closed-won").removesuffix("/approval")
    after = api.ok("GET", reread, other_org.admin)
    assert after.get("name") != "Taken over"
