"""``/internal/v1/console/*``: the settings console asks the api, with its bearer token, whether an
email may be sent a sign-in link, for a credential for a person who signed in, and to end it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import falcon.testing
import pytest

from dps_common.auth.authenticator import INVALID_KEY

from dps_api.composition import build_http
from dps_api.services.console_credentials import ConsoleCredentialService

from api_orgs import API, BEARER, INTERNAL, TOKEN, key_id_of, key_row_id, sign_in

CANDIDATES = f"{INTERNAL}/sign-in-candidates"
CREDENTIALS = f"{INTERNAL}/credentials"


@pytest.fixture(scope="module")
def settings(settings):
    return settings.model_copy(update={"console_api_token": TOKEN})


def whoami(client, key: str):
    return client.simulate_get(f"{API}/whoami", headers={"x-api-key": key})


def known(client, email: str) -> bool:
    resp = client.simulate_post(CANDIDATES, json={"email": email}, headers=BEARER)
    assert resp.status_code == 200, (email, resp.text)
    return resp.json["known"]


def test_sign_in_candidates_match_emails_ignoring_case(client, org):
    assert known(client, "admin@acme-corp.example") is True
    assert known(client, "  Viewer@ACME-corp.example ") is True


@pytest.mark.parametrize(
    "email", ["nobody@acme-corp.example", "not an email", "x" * 320, "ü@exämple.test", "admin@acme-corp.example.evil"]
)
def test_sign_in_candidates_never_error_for_unknown_emails(client, org, email):
    assert known(client, email) is False


def test_a_credential_acts_as_the_person_with_their_role(client, org, identity):
    identity.set_api_key_access(org.user.user_id, True)
    before = datetime.now(UTC)
    resp = client.simulate_post(CREDENTIALS, json={"email": "USER@acme-corp.example", "sessionId": str(uuid4())}, headers=BEARER)
    assert resp.status_code == 201, resp.text
    body = resp.json
    assert body["person"] == {
        "userId": str(org.user.user_id),
        "email": "user@acme-corp.example",
        "name": "User",
        "role": "user",
        "apiKeyAccess": True,
        "organizationId": str(org.id),
        "organizationName": "Acme Corp",
    }
    assert body["credential"].startswith(f"dps_{body['keyId']}_")
    expires_at = datetime.fromisoformat(body["expiresAt"])
    assert before + timedelta(hours=12) <= expires_at <= datetime.now(UTC) + timedelta(hours=12)
    assert resp.headers["cache-control"] == "no-store"
    assert whoami(client, body["credential"]).json["organization"]["id"] == str(org.id)


def test_an_unknown_email_gets_no_credential(client, org):
    resp = client.simulate_post(CREDENTIALS, json={"email": "nobody@acme-corp.example", "sessionId": str(uuid4())}, headers=BEARER)
    assert resp.status_code == 404 and resp.json["code"] == "not_found"
    assert resp.headers["content-type"].startswith("application/problem+json")


def test_an_email_in_several_organizations_signs_in_to_the_first_created(client, org, identity):
    later = identity.create_organization("Later Co")
    identity.create_user(later.id, "Admin@Acme-Corp.example", "Second", "view only")
    assert sign_in(client, "admin@acme-corp.example").answer["person"]["organizationId"] == str(org.id)


def test_a_credential_request_needs_an_email_and_a_session_id(client, org):
    for body in ({"email": "admin@acme-corp.example"}, {"sessionId": str(uuid4())}, {"email": "a", "sessionId": "x"}):
        assert client.simulate_post(CREDENTIALS, json=body, headers=BEARER).status_code == 400, body


def test_an_expired_credential_is_refused_like_an_unknown_key(client, org, tx, settings):
    past = datetime.now(UTC) - timedelta(hours=13)
    issued = ConsoleCredentialService(tx, settings.api_key_pepper, lambda: past, lambda key_id: None).issue(
        "admin@acme-corp.example", uuid4()
    )
    resp = whoami(client, issued.credential)
    assert resp.status_code == 401 and resp.json["detail"] == INVALID_KEY
    assert client.simulate_get(f"{API}/api-keys", headers={"x-api-key": issued.credential}).status_code == 401


def test_delete_ends_a_credential_at_once_and_is_idempotent(client, org, tx):
    console = sign_in(client, "admin@acme-corp.example")
    assert whoami(client, console.credential).status_code == 200  # now in this process's cache
    resp = client.simulate_delete(f"{CREDENTIALS}/{console.key_id}", headers=BEARER)
    assert resp.status_code == 204
    refused = whoami(client, console.credential)
    assert refused.status_code == 401 and refused.json["detail"] == INVALID_KEY
    assert client.simulate_delete(f"{CREDENTIALS}/{console.key_id}", headers=BEARER).status_code == 204
    assert client.simulate_delete(f"{CREDENTIALS}/unknownKeyId", headers=BEARER).status_code == 204
    # by row id too
    other = sign_in(client, "admin@acme-corp.example")
    assert client.simulate_delete(f"{CREDENTIALS}/{key_row_id(tx, other.key_id)}", headers=BEARER).status_code == 204
    assert whoami(client, other.credential).status_code == 401


def test_delete_never_touches_an_integration_key(client, org):
    resp = client.simulate_delete(f"{CREDENTIALS}/{key_id_of(org.admin.key)}", headers=BEARER)
    assert resp.status_code == 204
    assert whoami(client, org.admin.key).status_code == 200


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
def test_the_internal_routes_refuse_a_wrong_token(client, org, headers):
    console = sign_in(client, "admin@acme-corp.example")
    calls = [
        client.simulate_post(CANDIDATES, json={"email": "admin@acme-corp.example"}, headers=headers),
        client.simulate_post(CREDENTIALS, json={"email": "admin@acme-corp.example", "sessionId": str(uuid4())}, headers=headers),
        client.simulate_delete(f"{CREDENTIALS}/{console.key_id}", headers=headers),
    ]
    for resp in calls:
        assert resp.status_code == 401 and resp.json["code"] == "invalid_service_token"
    assert whoami(client, console.credential).status_code == 200


def test_an_api_key_is_not_a_service_token(client, org):
    resp = client.simulate_post(CANDIDATES, json={"email": "admin@acme-corp.example"}, headers=org.admin.headers)
    assert resp.status_code == 401


def test_not_served_without_a_configured_token_nor_documented(settings, tx, org):
    plain = falcon.testing.TestClient(build_http(settings.model_copy(update={"console_api_token": ""}), tx=tx))
    assert plain.simulate_post(CANDIDATES, json={"email": "x"}, headers=BEARER).status_code == 404
    assert plain.simulate_post(CREDENTIALS, json={}, headers=BEARER).status_code == 404
    assert plain.simulate_delete(f"{CREDENTIALS}/x", headers=BEARER).status_code == 404
    paths = plain.simulate_get("/external/v1/openapi.json").json["paths"]
    assert not any("console" in path or "internal" in path for path in paths)
