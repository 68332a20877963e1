"""``/webhook-configs`` through build_http: create (the secret shown once), read, list and paging,
organization scoping, validation, URL refusals, roles."""

from __future__ import annotations

import uuid

import falcon.testing
import pytest

from dps_webhooks.adapters.signing_secrets import SecretSealer
from dps_webhooks.composition import build_http
from dps_webhooks.db.models import WebhookEndpoint
from dps_webhooks.schemas.webhook_configs import WebhookConfig, WebhookConfigList, WebhookConfigWithSecret

BASE = "/external/v1/webhook-configs"
RECORD_KEYS = {
    "id", "url", "description", "eventTypes", "status", "consecutiveFailures", "disabledReason",
    "createdAt", "updatedAt", "secretRotatedAt", "revokedAt", "rateLimitPerSecond",
}  # fmt: skip
URL = "https://127.0.0.1:8443/hooks"


def create(client, org, **fields):
    resp = client.simulate_post(BASE, json={"url": URL, **fields}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def error_fields(resp):
    return [e["field"] for e in resp.json.get("errors", [])]


def stored_secret(app, tx, endpoint_id):
    with tx() as session:
        row = session.get_one(WebhookEndpoint, uuid.UUID(endpoint_id))
        return SecretSealer(app.context.settings.secret_key).open(row.id, row.secret_sealed)


# --- create and read -------------------------------------------------------------------------------


def test_create_returns_an_active_record_and_the_secret_once(client, app, org, tx):
    resp = client.simulate_post(
        BASE,
        json={
            "url": URL,
            "description": "Quotes to the ERP",
            "eventTypes": ["quote.approved", "quote.created", "quote.approved"],
            "organizationId": str(uuid.uuid4()),  # unknown fields are dropped
            "status": "PAUSED",  # not a create field: dropped, new endpoints are ACTIVE
        },
        headers=org.admin.headers,
    )
    assert resp.status_code == 201, resp.json
    created = resp.json
    WebhookConfigWithSecret.model_validate(created)
    assert set(created) == RECORD_KEYS | {"secret"}
    assert created["url"] == URL
    assert created["description"] == "Quotes to the ERP"
    assert created["eventTypes"] == ["quote.approved", "quote.created"]  # repeats dropped, order kept
    assert created["status"] == "ACTIVE"
    assert created["consecutiveFailures"] == 0
    assert created["disabledReason"] is None
    assert created["revokedAt"] is None and created["secretRotatedAt"] is None
    assert created["secret"].startswith("whsec_")
    assert stored_secret(app, tx, created["id"]) == created["secret"]  # sealed at rest, the same secret

    read = client.simulate_get(f"{BASE}/{created['id']}", headers=org.admin.headers)
    assert read.status_code == 200
    assert "secret" not in read.json
    assert read.json == {k: v for k, v in created.items() if k != "secret"}
    WebhookConfig.model_validate(read.json)
    listed = client.simulate_get(BASE, headers=org.admin.headers).json["webhookConfigs"]
    assert all("secret" not in item for item in listed)


def test_defaults_every_event_type_and_an_empty_description(client, org):
    created = create(client, org)
    assert created["eventTypes"] == []
    assert created["description"] == ""


def test_each_endpoint_gets_its_own_secret(client, org):
    assert create(client, org)["secret"] != create(client, org)["secret"]


def test_another_organizations_endpoint_is_a_404_like_a_missing_one(client, org, other_org):
    created = create(client, org)
    foreign = client.simulate_get(f"{BASE}/{created['id']}", headers=other_org.admin.headers)
    missing = client.simulate_get(f"{BASE}/{uuid.uuid4()}", headers=org.admin.headers)
    malformed = client.simulate_get(f"{BASE}/not-a-uuid", headers=org.admin.headers)
    for resp in (foreign, missing, malformed):
        assert resp.status_code == 404
        assert resp.json["code"] == "not_found"
    assert foreign.json["detail"] == missing.json["detail"]
    for method in ("PUT", "DELETE", "POST"):
        suffix = "/rotate-secret" if method == "POST" else ""
        resp = client.simulate_request(
            method, f"{BASE}/{created['id']}{suffix}", json={"description": "x"}, headers=other_org.admin.headers
        )
        assert resp.status_code == 404, method
    assert client.simulate_get(f"{BASE}/{created['id']}", headers=org.admin.headers).json["status"] == "ACTIVE"


# --- validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": 42}, "url"),
        ({"url": ""}, "url"),
        ({"url": URL, "description": 7}, "description"),
        ({"url": URL, "description": None}, "description"),
        ({"url": URL, "description": "x" * 501}, "description"),
        ({"url": URL, "eventTypes": "quote.approved"}, "eventTypes"),
        ({"url": URL, "eventTypes": ["Quote Approved"]}, "eventTypes[0]"),
        ({"url": URL, "eventTypes": ["quote.approved", 3]}, "eventTypes[1]"),
        ({"url": URL, "eventTypes": ["quote.approved", "internal.api_key.revoked"]}, "eventTypes[1]"),  # never delivered
        ({"url": URL, "eventTypes": ["quote.approved"] * 101}, "eventTypes"),
    ],
)
def test_bad_fields_are_a_400_naming_the_field(client, org, body, field):
    resp = client.simulate_post(BASE, json=body, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert resp.json["code"] == "validation_error"
    assert field in error_fields(resp)


def test_malformed_json_and_wrong_content_type(client, org):
    resp = client.simulate_post(BASE, body="{", headers={**org.admin.headers, "Content-Type": "application/json"})
    assert resp.status_code == 400
    assert resp.json["code"] == "malformed_json"
    resp = client.simulate_post(BASE, body=f'{{"url": "{URL}"}}', headers={**org.admin.headers, "Content-Type": "text/plain"})
    assert resp.status_code == 415
    assert resp.json["code"] == "unsupported_media_type"
    created = create(client, org)
    resp = client.simulate_put(f"{BASE}/{created['id']}", body="{}", headers=org.admin.headers)  # no Content-Type
    assert resp.status_code == 415


def test_a_body_over_10_mb_is_a_413(client, org):
    body = '{"url": "' + URL + '", "description": "' + "x" * (10 * 1024 * 1024) + '"}'
    resp = client.simulate_post(BASE, body=body, headers={**org.admin.headers, "Content-Type": "application/json"})
    assert resp.status_code == 413
    assert client.simulate_get(BASE, headers=org.admin.headers).json["webhookConfigs"] == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:8443/hooks", "https"),
        ("https://user:pass@127.0.0.1:8443/hooks", "credentials"),
        ("https://169.254.169.254/latest", "metadata"),
        ("https://10.1.2.3/hooks", "private"),
        ("https://[::ffff:10.0.0.1]/hooks", "private"),
        ("https://does-not-exist.invalid/hooks", "resolve"),
        ("not-a-url", "https"),
        ("https://hooks example.com/x", "whitespace"),
    ],
)
def test_refused_urls_are_a_400_naming_url_with_the_reason(client, org, url, reason):
    resp = client.simulate_post(BASE, json={"url": url}, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert resp.json["code"] == "validation_error"
    assert resp.json["errors"][0]["field"] == "url"
    assert reason in resp.json["errors"][0]["message"]
    assert client.simulate_get(BASE, headers=org.admin.headers).json["webhookConfigs"] == []


def test_loopback_is_refused_unless_allowlisted(make_settings, tx, org):
    strict = falcon.testing.TestClient(build_http(make_settings(WEBHOOK_ALLOWED_NETWORKS=""), tx=tx))
    for url in (URL, "https://localhost/hooks", "https://2130706433/hooks", "https://[::1]/hooks"):
        resp = strict.simulate_post(BASE, json={"url": url}, headers=org.admin.headers)
        assert resp.status_code == 400, url
        assert resp.json["errors"][0]["field"] == "url"
        assert "loopback" in resp.json["errors"][0]["message"], url
    created = create(falcon.testing.TestClient(build_http(make_settings(), tx=tx)), org)  # allowlisted: accepted
    resp = strict.simulate_put(f"{BASE}/{created['id']}", json={"url": "https://127.0.0.2/x"}, headers=org.admin.headers)
    assert resp.status_code == 400  # a new URL is vetted again on update
    assert resp.json["errors"][0]["field"] == "url"


# --- roles -------------------------------------------------------------------------------------------


def test_only_admin_keys_manage_webhooks(client, org):
    created = create(client, org)
    calls = [
        ("GET", BASE, None),
        ("POST", BASE, {"url": URL}),
        ("GET", f"{BASE}/{created['id']}", None),
        ("PUT", f"{BASE}/{created['id']}", {"status": "PAUSED"}),
        ("DELETE", f"{BASE}/{created['id']}", None),
        ("POST", f"{BASE}/{created['id']}/rotate-secret", None),
        ("POST", f"{BASE}/{created['id']}/test", None),
        ("GET", f"{BASE}/{created['id']}/deliveries", None),
    ]
    for member in (org.user, org.viewer):
        for method, path, body in calls:
            resp = client.simulate_request(method, path, json=body, headers=member.headers)
            assert resp.status_code == 403, (method, path)
            assert resp.json["code"] == "missing_scope"
            assert resp.json["requiredScope"] == "webhooks:manage"
            assert "webhooks:manage" in resp.json["detail"]
    resp = client.simulate_get(BASE)
    assert resp.status_code == 401
    assert resp.json["detail"] == "API key is required. Pass it via the x-api-key header."
    resp = client.simulate_get(BASE, headers={"x-api-key": "dps_nope_nope"})
    assert resp.status_code == 401
    assert resp.json["detail"] == "Invalid API key."
    assert client.simulate_get(f"{BASE}/{created['id']}", headers=org.admin.headers).json["status"] == "ACTIVE"


# --- list and paging ---------------------------------------------------------------------------------


def walk(client, headers, limit):
    items, pages, cursor = [], 0, None
    while True:
        params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        resp = client.simulate_get(BASE, params=params, headers=headers)
        assert resp.status_code == 200, resp.json
        WebhookConfigList.model_validate(resp.json)
        assert len(resp.json["webhookConfigs"]) <= limit
        pages += 1
        items += resp.json["webhookConfigs"]
        cursor = resp.json["nextCursor"]
        if cursor is None:
            return items, pages


def test_list_pages_in_a_stable_order_to_a_null_cursor_and_only_the_callers_organization(client, org, other_org):
    ids = [create(client, org)["id"] for _ in range(5)]
    theirs = create(client, other_org)["id"]
    items, pages = walk(client, org.admin.headers, 2)
    assert [item["id"] for item in items] == ids  # creation order, each once
    assert pages == 3
    assert walk(client, org.admin.headers, 5)[0] == items
    everything = client.simulate_get(BASE, headers=org.admin.headers).json
    assert [item["id"] for item in everything["webhookConfigs"]] == ids and everything["nextCursor"] is None
    assert theirs in [item["id"] for item in walk(client, other_org.admin.headers, 100)[0]]
    assert theirs not in [item["id"] for item in items]


def test_a_revoked_endpoint_mid_walk_does_not_break_it(client, org):
    ids = [create(client, org)["id"] for _ in range(4)]
    first = client.simulate_get(BASE, params={"limit": 2}, headers=org.admin.headers).json
    client.simulate_delete(f"{BASE}/{ids[1]}", headers=org.admin.headers)
    rest = client.simulate_get(BASE, params={"limit": 2, "cursor": first["nextCursor"]}, headers=org.admin.headers)
    assert [item["id"] for item in rest.json["webhookConfigs"]] == ids[2:]


@pytest.mark.parametrize("limit", ["0", "501", "-1", "abc", "1.5", "", "１０", "١٠", "१०", "¹⁰", "1０"])
def test_limit_out_of_range_is_a_400_never_clamped(client, org, limit):
    resp = client.simulate_get(BASE, query_string=f"limit={limit}", headers=org.admin.headers)
    assert resp.status_code == 400, limit
    assert "500" in resp.json["detail"]


def test_limit_bounds_are_accepted(client, org):
    for limit in (1, 500):
        assert client.simulate_get(BASE, params={"limit": limit}, headers=org.admin.headers).status_code == 200


def test_cursors_not_issued_for_this_list_are_a_400(client, org, other_org):
    create(client, org)
    create(client, org)
    cursor = client.simulate_get(BASE, params={"limit": 1}, headers=org.admin.headers).json["nextCursor"]
    assert cursor
    created = create(client, org)
    deliveries = f"{BASE}/{created['id']}/deliveries"
    for path, bad in (
        (BASE, "made-up"),
        (BASE, cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")),
        (deliveries, cursor),  # issued, but for another list
    ):
        resp = client.simulate_get(path, params={"cursor": bad}, headers=org.admin.headers)
        assert resp.status_code == 400, (path, bad)
        assert resp.json["code"] == "invalid_cursor"


def test_a_cursor_issued_to_one_organization_is_a_400_for_another(client, org, other_org):
    create(client, org)
    create(client, org)
    create(client, other_org)
    create(client, other_org)
    cursor = client.simulate_get(BASE, params={"limit": 1}, headers=org.admin.headers).json["nextCursor"]
    assert cursor
    resp = client.simulate_get(BASE, params={"limit": 1, "cursor": cursor}, headers=other_org.admin.headers)
    assert resp.status_code == 400
    assert resp.json["code"] == "invalid_cursor"
    assert resp.json["detail"] == "The cursor was not issued by this service for this list and its filters."
    mine = client.simulate_get(BASE, params={"limit": 1, "cursor": cursor}, headers=org.admin.headers)
    assert mine.status_code == 200 and mine.json["webhookConfigs"]
