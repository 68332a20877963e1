"""``/api-keys``: the settings console's API keys page. Only a console credential holds
``api-keys:manage``: an admin's manages every integration key of the organization, a person's with
API-key access their own (never above their own role); integration keys, even an admin's, and
console credentials of people without access get 403."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from dps_common.auth.authenticator import INVALID_KEY
from dps_common.auth.revocations import KEY_EVENTS, KEY_REVOKED, KEY_ROTATED

from dps_api.db.models.outbox import OutboxEvent

from api_orgs import API, BEARER, TOKEN, Console, key_id_of, key_row_id, sign_in

KEYS = f"{API}/api-keys"
SCOPE = "api-keys:manage"


@pytest.fixture(scope="module")
def settings(settings):
    return settings.model_copy(update={"console_api_token": TOKEN})


@pytest.fixture
def admin(client, org) -> Console:
    return sign_in(client, "admin@acme-corp.example")


@pytest.fixture
def user(client, org, identity) -> Console:
    """The user of the organization, granted API-key access by an admin."""
    identity.set_api_key_access(org.user.user_id, True)
    return sign_in(client, "user@acme-corp.example")


def whoami(client, key: str) -> int:
    return client.simulate_get(f"{API}/whoami", headers={"x-api-key": key}).status_code


def assert_refused(resp, status: int, code: str) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert resp.json["code"] == code
    return resp.json


def listed(client, console: Console, **params) -> list[dict]:
    resp = client.simulate_get(KEYS, headers=console.headers, params=params)
    assert resp.status_code == 200, resp.text
    return resp.json["apiKeys"]


def console_operations(some_id: str) -> list[tuple[str, str, dict | None]]:
    return [
        ("GET", KEYS, None),
        ("POST", KEYS, {"name": "x", "role": "view only"}),
        ("POST", f"{KEYS}/{some_id}/rotate", None),
        ("POST", f"{KEYS}/{some_id}/revoke", None),
        ("GET", f"{API}/people", None),
        ("PUT", f"{API}/people/{some_id}/api-key-access", {"granted": True}),
    ]


def test_an_integration_key_never_manages_keys_even_an_admins(client, org):
    for method, path, body in console_operations(str(org.admin.key_row_id)):
        resp = client.simulate_request(method, path, json=body, headers=org.admin.headers)
        problem = assert_refused(resp, 403, "missing_scope")
        assert problem["requiredScope"] == SCOPE, (method, path)


def test_people_without_api_key_access_get_403(client, org):
    for email in ("viewer@acme-corp.example", "user@acme-corp.example"):  # neither was granted access
        console = sign_in(client, email)
        assert whoami(client, console.credential) == 200  # the credential itself works
        for method, path, body in console_operations(str(org.viewer.key_row_id)):
            resp = client.simulate_request(method, path, json=body, headers=console.headers)
            assert assert_refused(resp, 403, "missing_scope")["requiredScope"] == SCOPE, (email, method, path)


def test_an_admin_lists_every_integration_key_of_the_organization(client, org, other_org, admin):
    keys = listed(client, admin)
    assert [k["id"] for k in keys] == [str(m.key_row_id) for m in (org.admin, org.user, org.viewer)]
    first = keys[0]
    assert first == {
        "id": str(org.admin.key_row_id),
        "name": "admin integration",
        "role": "admin",
        "userId": str(org.admin.user_id),
        "userName": "Admin",
        "prefix": "dps_" + key_id_of(org.admin.key),
        "status": "active",
        "createdAt": first["createdAt"],
        "lastUsedAt": None,
        "rotatedAt": None,
        "revokedAt": None,
    }
    assert "secret" not in first
    # the admin's own console credential is a key row too, never listed


def test_an_admin_issues_rotates_and_revokes(client, org, admin):
    issued = client.simulate_post(
        KEYS, json={"name": "Salesforce sync", "role": "user", "userId": str(org.user.user_id)}, headers=admin.headers
    )
    assert issued.status_code == 201, issued.text
    key = issued.json
    assert (key["name"], key["role"], key["userId"], key["userName"], key["status"]) == (
        "Salesforce sync", "user", str(org.user.user_id), "User", "active",
    )
    assert key["secret"].startswith(key["prefix"] + "_")
    assert whoami(client, key["secret"]) == 200  # works at once
    assert key["id"] in [k["id"] for k in listed(client, admin)]

    rotated = client.simulate_post(f"{KEYS}/{key['id']}/rotate", headers=admin.headers)
    assert rotated.status_code == 200, rotated.text
    assert rotated.json["id"] == key["id"] and rotated.json["prefix"] != key["prefix"]
    assert rotated.json["rotatedAt"] is not None
    assert whoami(client, key["secret"]) == 401  # the old value stops working at once
    assert whoami(client, rotated.json["secret"]) == 200

    revoked = client.simulate_post(f"{KEYS}/{key['id']}/revoke", headers=admin.headers)
    assert revoked.status_code == 200, revoked.text
    assert revoked.json["status"] == "revoked" and revoked.json["revokedAt"] is not None
    assert "secret" not in revoked.json
    refused = client.simulate_get(f"{API}/whoami", headers={"x-api-key": rotated.json["secret"]})
    assert refused.status_code == 401 and refused.json["detail"] == INVALID_KEY
    # revoking again changes nothing; rotating a revoked key is a conflict
    again = client.simulate_post(f"{KEYS}/{key['id']}/revoke", headers=admin.headers)
    assert again.status_code == 200 and again.json["revokedAt"] == revoked.json["revokedAt"]
    assert_refused(client.simulate_post(f"{KEYS}/{key['id']}/rotate", headers=admin.headers), 409, "api_key_revoked")


def test_an_admin_issues_any_role_for_themselves_by_default(client, org, admin):
    resp = client.simulate_post(KEYS, json={"name": "Ops", "role": "admin"}, headers=admin.headers)
    assert resp.status_code == 201, resp.text
    assert (resp.json["userId"], resp.json["role"]) == (str(org.admin.user_id), "admin")


def test_an_admin_naming_no_user_of_the_organization_gets_400(client, other_org, admin):
    resp = client.simulate_post(
        KEYS, json={"name": "x", "role": "user", "userId": str(other_org.user.user_id)}, headers=admin.headers
    )
    problem = assert_refused(resp, 400, "validation_error")
    assert problem["errors"][0]["field"] == "userId"


def test_a_user_with_access_issues_their_own_keys_up_to_their_role(client, org, user):
    own = client.simulate_post(KEYS, json={"name": "My script", "role": "view only"}, headers=user.headers)
    assert own.status_code == 201, own.text
    assert own.json["userId"] == str(org.user.user_id)
    assert whoami(client, own.json["secret"]) == 200

    too_high = client.simulate_post(KEYS, json={"name": "Mine", "role": "admin"}, headers=user.headers)
    problem = assert_refused(too_high, 403, "role_too_high")
    assert problem["errors"][0]["field"] == "role"

    as_other = client.simulate_post(
        KEYS, json={"name": "Theirs", "role": "user", "userId": str(org.viewer.user_id)}, headers=user.headers
    )
    assert assert_refused(as_other, 403, "forbidden")["errors"][0]["field"] == "userId"


def test_a_user_with_access_sees_and_acts_on_their_own_keys_only(client, org, user):
    assert [k["id"] for k in listed(client, user)] == [str(org.user.key_row_id)]
    for action in ("rotate", "revoke"):
        resp = client.simulate_post(f"{KEYS}/{org.admin.key_row_id}/{action}", headers=user.headers)
        assert_refused(resp, 404, "not_found")
    assert whoami(client, org.admin.key) == 200
    rotated = client.simulate_post(f"{KEYS}/{org.user.key_row_id}/rotate", headers=user.headers)
    assert rotated.status_code == 200, rotated.text
    assert whoami(client, org.user.key) == 401


def test_a_user_with_access_may_revoke_but_not_rotate_a_key_above_their_role(client, org, admin, user):
    """An admin may issue an admin key acting as the user; rotating it would hand the user its secret."""
    above = client.simulate_post(
        KEYS, json={"name": "Admin-issued", "role": "admin", "userId": str(org.user.user_id)}, headers=admin.headers
    ).json
    assert_refused(client.simulate_post(f"{KEYS}/{above['id']}/rotate", headers=user.headers), 403, "role_too_high")
    assert whoami(client, above["secret"]) == 200
    revoked = client.simulate_post(f"{KEYS}/{above['id']}/revoke", headers=user.headers)
    assert revoked.status_code == 200 and revoked.json["status"] == "revoked"


def test_console_credentials_are_not_keys_of_this_page(client, tx, admin, user):
    for console in (admin, user):
        row = key_row_id(tx, console.key_id)
        for action in ("rotate", "revoke"):
            resp = client.simulate_post(f"{KEYS}/{row}/{action}", headers=admin.headers)
            assert_refused(resp, 404, "not_found")
    assert whoami(client, user.credential) == 200


def test_another_organizations_keys_are_not_found(client, other_org, admin):
    for action in ("rotate", "revoke"):
        assert_refused(client.simulate_post(f"{KEYS}/{other_org.admin.key_row_id}/{action}", headers=admin.headers), 404, "not_found")
    assert_refused(client.simulate_post(f"{KEYS}/not-a-uuid/revoke", headers=admin.headers), 404, "not_found")


def test_the_list_pages_with_cursors(client, org, admin):
    for n in range(3):
        client.simulate_post(KEYS, json={"name": f"k{n}", "role": "user"}, headers=admin.headers)
    seen, params = [], {"limit": "2"}
    while True:
        page = client.simulate_get(KEYS, headers=admin.headers, params=params)
        assert page.status_code == 200, page.text
        assert len(page.json["apiKeys"]) <= 2
        seen += [k["id"] for k in page.json["apiKeys"]]
        if page.json["nextCursor"] is None:
            break
        params["cursor"] = page.json["nextCursor"]
    assert len(seen) == 6 and seen == sorted(seen)
    assert_refused(client.simulate_get(KEYS, headers=admin.headers, params={"limit": "501"}), 400, "invalid_limit")
    assert_refused(client.simulate_get(KEYS, headers=admin.headers, params={"cursor": "forged.x"}), 400, "invalid_cursor")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"role": "user"}, "name"),
        ({"name": "", "role": "user"}, "name"),
        ({"name": "x" * 101, "role": "user"}, "name"),
        ({"name": "x", "role": "owner"}, "role"),
        ({"name": "x", "role": "user", "userId": "nope"}, "userId"),
    ],
)
def test_bodies_are_validated_field_by_field(client, admin, body, field):
    problem = assert_refused(client.simulate_post(KEYS, json=body, headers=admin.headers), 400, "validation_error")
    assert problem["errors"][0]["field"] == field


def test_a_replayed_issue_never_shows_the_secret_again(client, admin):
    headers = {**admin.headers, "Idempotency-Key": "issue-1"}
    first = client.simulate_post(KEYS, json={"name": "Retry-safe", "role": "user"}, headers=headers)
    assert first.status_code == 201 and first.json["secret"]
    replay = client.simulate_post(KEYS, json={"name": "Retry-safe", "role": "user"}, headers=headers)
    assert replay.status_code == 201
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert replay.json["id"] == first.json["id"] and replay.json["secret"] is None
    assert "secretShownOnce" in replay.json
    assert first.json["secret"] not in replay.text


def key_events(tx, org) -> list[tuple[str, dict]]:
    with tx() as session:
        rows = session.execute(
            select(OutboxEvent.event_type, OutboxEvent.envelope)
            .where(OutboxEvent.organization_id == org.id, OutboxEvent.event_type.in_(KEY_EVENTS))
            .order_by(OutboxEvent.occurred_at, OutboxEvent.id)
        )
        return [(row.event_type, row.envelope["data"]) for row in rows]


def test_console_changes_tell_every_service_through_key_events(client, tx, org, admin, user):
    """The same events as the admin command line's: every service drops the old key id at once."""
    client.simulate_post(f"{KEYS}/{org.user.key_row_id}/rotate", headers=user.headers)
    client.simulate_post(f"{KEYS}/{org.viewer.key_row_id}/revoke", headers=admin.headers)
    client.simulate_delete(f"/internal/v1/console/credentials/{user.key_id}", headers=BEARER)
    user_credential_row = key_row_id(tx, user.key_id)
    assert key_events(tx, org) == [
        (KEY_ROTATED, {"apiKeyId": str(org.user.key_row_id), "keyId": key_id_of(org.user.key)}),
        (KEY_REVOKED, {"apiKeyId": str(org.viewer.key_row_id), "keyId": key_id_of(org.viewer.key)}),
        (KEY_REVOKED, {"apiKeyId": str(user_credential_row), "keyId": user.key_id}),
    ]
