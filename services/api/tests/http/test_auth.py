"""Authentication and scopes through build_http: the spec's 401 messages and 403 naming the scope."""

from dps_common.auth.authenticator import INVALID_KEY, MISSING_KEY


def test_whoami_returns_the_keys_organization_and_nothing_else(client, org):
    resp = client.simulate_get("/external/v1/whoami", headers=org.viewer.headers)
    assert resp.status_code == 200
    assert resp.json == {"organization": {"id": str(org.id), "name": "Acme Corp"}}
    assert resp.headers["x-request-id"]


def test_missing_key_gives_the_spec_message(client):
    resp = client.simulate_get("/external/v1/whoami")
    assert resp.status_code == 401
    assert resp.json["detail"] == MISSING_KEY
    assert resp.json["code"] == "missing_api_key"
    assert resp.headers["content-type"] == "application/problem+json"
    assert resp.json["requestId"] == resp.headers["x-request-id"]


def test_malformed_unknown_and_wrong_secret_keys_are_invalid(client, org):
    wrong_secret = org.admin.key[: -4] + "AAAA"
    for key in ("nope", "dps_", "dps_abc", "dps_unknownkeyid_secret", wrong_secret):
        resp = client.simulate_get("/external/v1/whoami", headers={"x-api-key": key})
        assert resp.status_code == 401, key
        assert resp.json["detail"] == INVALID_KEY


def test_revoked_key_stops_at_once_in_the_same_process(client, org):
    assert client.simulate_get("/external/v1/whoami", headers=org.user.headers).status_code == 200
    org.identity.revoke_key(org.user.key_row_id)
    resp = client.simulate_get("/external/v1/whoami", headers=org.user.headers)
    assert resp.status_code == 401
    assert resp.json["detail"] == INVALID_KEY


def test_rotated_key_old_value_stops_and_new_value_works(client, org):
    assert client.simulate_get("/external/v1/whoami", headers=org.user.headers).status_code == 200
    rotated = org.identity.rotate_key(org.user.key_row_id)
    assert client.simulate_get("/external/v1/whoami", headers=org.user.headers).status_code == 401
    assert client.simulate_get("/external/v1/whoami", headers={"x-api-key": rotated.secret}).status_code == 200


def test_request_id_from_the_caller_is_kept(client, org):
    resp = client.simulate_get("/external/v1/whoami", headers={**org.viewer.headers, "X-Request-Id": "abc-123"})
    assert resp.headers["x-request-id"] == "abc-123"


def test_health_and_readiness_need_no_key(client):
    assert client.simulate_get("/healthz").json == {"status": "ok"}
    ready = client.simulate_get("/readyz")
    assert ready.status_code == 200
    assert ready.json["checks"] == {"database": "ok"}
    assert b"dps_http_requests_total" in client.simulate_get("/metrics").content
