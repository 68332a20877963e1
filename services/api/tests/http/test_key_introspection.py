"""``POST /internal/v1/key-introspection``: other services check keys here with a service token."""

from datetime import datetime, timedelta
from uuid import uuid4

import falcon.testing
import pytest

from dps_common.auth.introspection import expiry_from_json, principal_from_json
from dps_common.auth.scopes import Scope
from dps_common.clock import utc_now

from dps_api.composition import build_http
from dps_api.resources.routes import RESOURCE_MODULES
from dps_api.services.console_credentials import ConsoleCredentialService
from dps_api.services.identity import IdentityService

TOKEN = "introspection-token-0123456789abcdef0123456789"
URL = "/internal/v1/key-introspection"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(settings, tx):
    return falcon.testing.TestClient(build_http(settings.model_copy(update={"internal_api_token": TOKEN}), tx=tx))


def test_an_active_key_resolves_to_its_principal(client, org):
    resp = client.simulate_post(URL, json={"key": org.user.key}, headers=BEARER)
    assert resp.status_code == 200
    assert resp.json == {
        "active": True,
        "organizationId": str(org.id),
        "organizationName": "Acme Corp",
        "userId": str(org.user.user_id),
        "role": "user",
        "keyId": org.user.key.split("_")[1],
        "console": False,
        "apiKeyAccess": False,
        "expiresAt": None,
    }


def test_unknown_malformed_and_revoked_keys_are_inactive(client, org, identity):
    identity.revoke_key(org.viewer.key_row_id)
    for key in ("nope", "dps_unknown_secret", org.admin.key[:-4] + "AAAA", org.viewer.key):
        resp = client.simulate_post(URL, json={"key": key}, headers=BEARER)
        assert resp.status_code == 200, key
        assert resp.json == {"active": False}, key


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"x-api-key": "dps_x_y"}])
def test_callers_without_the_service_token_are_refused(client, org, headers):
    resp = client.simulate_post(URL, json={"key": org.admin.key}, headers=headers)
    assert resp.status_code == 401
    assert resp.json["code"] == "invalid_service_token"


def test_a_body_without_a_key_is_a_400(client):
    resp = client.simulate_post(URL, json={"token": "x"}, headers=BEARER)
    assert resp.status_code == 400


def test_not_served_without_a_configured_token_nor_documented(settings, tx):
    plain = falcon.testing.TestClient(build_http(settings, tx=tx))
    assert plain.simulate_post(URL, json={"key": "x"}).status_code == 404
    assert not any("internal" in path for path in plain.simulate_get("/external/v1/openapi.json").json["paths"])


def test_every_resource_module_is_registered_once():
    # a second registration silently replaces the first route (and doubles its start-up work)
    assert len(RESOURCE_MODULES) == len(set(RESOURCE_MODULES))


def test_answers_come_from_the_database_not_this_process_cache(client, org, settings, tx):
    """The caller caches the answer for its TTL from now: an answer from our cache would add our
    entry's age to that bound (a revoked key kept working for two TTLs in the dispatcher)."""
    elsewhere = IdentityService(tx, settings.api_key_pepper, utc_now, lambda key_id: None)  # the admin CLI
    assert client.simulate_get("/external/v1/whoami", headers={"x-api-key": org.admin.key}).status_code == 200
    elsewhere.revoke_key(org.admin.key_row_id)
    # this process's cache still holds the key (the TTL is its bound here)...
    assert client.simulate_get("/external/v1/whoami", headers={"x-api-key": org.admin.key}).status_code == 200
    # ...but the other services hear the truth
    assert client.simulate_post(URL, json={"key": org.admin.key}, headers=BEARER).json == {"active": False}


def test_a_console_credential_says_so_with_its_end_and_the_persons_access(client, org, identity, tx, settings):
    identity.set_api_key_access(org.user.user_id, True)
    issued = ConsoleCredentialService(tx, settings.api_key_pepper, utc_now, lambda key_id: None).issue(
        "user@acme-corp.example", uuid4()
    )
    body = client.simulate_post(URL, json={"key": issued.credential}, headers=BEARER).json
    assert (body["active"], body["console"], body["apiKeyAccess"], body["keyId"]) == (True, True, True, issued.key_id)
    assert datetime.fromisoformat(body["expiresAt"]) == issued.expires_at
    principal = principal_from_json(body)
    assert principal is not None and principal.has(Scope.API_KEYS_MANAGE)
    assert expiry_from_json(body) == issued.expires_at
    # an integration key of the same person never manages keys
    plain = principal_from_json(client.simulate_post(URL, json={"key": org.user.key}, headers=BEARER).json)
    assert plain is not None and not plain.has(Scope.API_KEYS_MANAGE)


def test_an_expired_console_credential_is_inactive(client, org, tx, settings):
    past = utc_now() - timedelta(hours=13)
    issued = ConsoleCredentialService(tx, settings.api_key_pepper, lambda: past, lambda key_id: None).issue(
        "admin@acme-corp.example", uuid4()
    )
    assert client.simulate_post(URL, json={"key": issued.credential}, headers=BEARER).json == {"active": False}
