"""``/people``: the settings console's team page. Only an admin's console credential may list the
organization's people and grant or withdraw their API-key access; a change signs the person out of
the console (their credentials are revoked) and leaves their integration keys as they are."""

from __future__ import annotations

import pytest

from api_orgs import API, TOKEN, sign_in

PEOPLE = f"{API}/people"


@pytest.fixture(scope="module")
def settings(settings):
    return settings.model_copy(update={"console_api_token": TOKEN})


def whoami(client, key: str) -> int:
    return client.simulate_get(f"{API}/whoami", headers={"x-api-key": key}).status_code


def access(client, admin, person_id, granted: bool):
    return client.simulate_put(f"{PEOPLE}/{person_id}/api-key-access", json={"granted": granted}, headers=admin.headers)


def test_an_admin_lists_the_organizations_people(client, org, other_org, identity):
    identity.set_api_key_access(org.user.user_id, True)
    admin = sign_in(client, "admin@acme-corp.example")
    resp = client.simulate_get(PEOPLE, headers=admin.headers)
    assert resp.status_code == 200, resp.text
    assert resp.json == {
        "people": [
            {"id": str(org.admin.user_id), "email": "admin@acme-corp.example", "name": "Admin", "role": "admin", "apiKeyAccess": False},
            {"id": str(org.user.user_id), "email": "user@acme-corp.example", "name": "User", "role": "user", "apiKeyAccess": True},
            {"id": str(org.viewer.user_id), "email": "viewer@acme-corp.example", "name": "Viewer", "role": "view only", "apiKeyAccess": False},
        ],
        "nextCursor": None,
    }
    first = client.simulate_get(PEOPLE, headers=admin.headers, params={"limit": "2"}).json
    rest = client.simulate_get(PEOPLE, headers=admin.headers, params={"limit": "2", "cursor": first["nextCursor"]}).json
    assert [p["id"] for p in first["people"] + rest["people"]] == [p["id"] for p in resp.json["people"]]
    assert rest["nextCursor"] is None


def test_granting_access_lets_the_person_manage_their_keys_after_signing_in_again(client, org, identity):
    admin = sign_in(client, "admin@acme-corp.example")
    user = sign_in(client, "user@acme-corp.example")
    assert client.simulate_get(f"{API}/api-keys", headers=user.headers).status_code == 403

    resp = access(client, admin, org.user.user_id, True)
    assert resp.status_code == 200, resp.text
    assert resp.json == {
        "id": str(org.user.user_id), "email": "user@acme-corp.example", "name": "User", "role": "user",
        "apiKeyAccess": True,
    }
    assert whoami(client, user.credential) == 401  # signed out of the console: the cached principal is gone
    again = sign_in(client, "user@acme-corp.example")
    assert again.answer["person"]["apiKeyAccess"] is True
    keys = client.simulate_get(f"{API}/api-keys", headers=again.headers)
    assert keys.status_code == 200 and [k["id"] for k in keys.json["apiKeys"]] == [str(org.user.key_row_id)]
    # granting again changes nothing and signs nobody out
    assert access(client, admin, org.user.user_id, True).status_code == 200
    assert whoami(client, again.credential) == 200


def test_a_view_only_person_is_never_granted_access(client, org, identity):
    """The design gives view only no API-key rights: a grant (a forged form, say) is refused and
    changes nothing; withdrawing stays possible."""
    admin = sign_in(client, "admin@acme-corp.example")
    viewer = sign_in(client, "viewer@acme-corp.example")
    refused = access(client, admin, org.viewer.user_id, True)
    assert refused.status_code == 409 and refused.json["code"] == "view_only_no_key_access", refused.text
    assert not identity.list_users(org.id)[2].api_key_access
    assert whoami(client, viewer.credential) == 200  # nothing changed: nobody signed out
    withdrawn = access(client, admin, org.viewer.user_id, False)
    assert withdrawn.status_code == 200 and withdrawn.json["apiKeyAccess"] is False


def test_withdrawing_access_ends_key_management_but_keeps_the_keys(client, org, identity):
    identity.set_api_key_access(org.user.user_id, True)
    admin = sign_in(client, "admin@acme-corp.example")
    user = sign_in(client, "user@acme-corp.example")
    own = client.simulate_post(f"{API}/api-keys", json={"name": "Mine", "role": "user"}, headers=user.headers).json

    resp = access(client, admin, org.user.user_id, False)
    assert resp.status_code == 200 and resp.json["apiKeyAccess"] is False
    assert whoami(client, user.credential) == 401
    again = sign_in(client, "user@acme-corp.example")
    assert client.simulate_get(f"{API}/api-keys", headers=again.headers).status_code == 403
    assert whoami(client, own["secret"]) == 200 and whoami(client, org.user.key) == 200


def test_only_an_admin_manages_the_team(client, org, identity):
    identity.set_api_key_access(org.user.user_id, True)
    user = sign_in(client, "user@acme-corp.example")
    listed = client.simulate_get(PEOPLE, headers=user.headers)
    assert listed.status_code == 403 and listed.json["code"] == "forbidden"
    changed = access(client, user, org.viewer.user_id, True)
    assert changed.status_code == 403 and changed.json["code"] == "forbidden"
    assert not identity.list_users(org.id)[2].api_key_access


def test_another_organizations_person_is_not_found(client, org, other_org):
    admin = sign_in(client, "admin@acme-corp.example")
    for target in (other_org.user.user_id, "not-a-uuid"):
        resp = access(client, admin, target, True)
        assert resp.status_code == 404 and resp.json["code"] == "not_found"


def test_the_body_must_say_granted_as_a_boolean(client, org):
    admin = sign_in(client, "admin@acme-corp.example")
    for body in ({}, {"granted": "yes"}, {"granted": None}):
        resp = client.simulate_put(f"{PEOPLE}/{org.user.user_id}/api-key-access", json=body, headers=admin.headers)
        assert resp.status_code == 400 and resp.json["errors"][0]["field"] == "granted", body
