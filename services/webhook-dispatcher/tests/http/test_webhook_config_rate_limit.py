"""An endpoint's ``rateLimitPerSecond`` through build_http: set on create, changed, kept and cleared
(null) by PUT, returned on every endpoint body, refused out of range or not an integer (400 naming
the field), documented in the OpenAPI document with examples."""

from __future__ import annotations

import uuid

import pytest

from dps_webhooks.db.models import WebhookEndpoint

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"


def create(client, org, **fields):
    resp = client.simulate_post(BASE, json={"url": URL, **fields}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def put(client, org, endpoint, **fields):
    return client.simulate_put(f"{BASE}/{endpoint['id']}", json=fields, headers=org.admin.headers)


def stored_rate(tx, endpoint_id):
    with tx() as session:
        return session.get_one(WebhookEndpoint, uuid.UUID(endpoint_id)).rate_limit_per_second


def test_create_sets_it_and_every_body_returns_it(client, org, tx):
    created = create(client, org, rateLimitPerSecond=5)
    assert created["rateLimitPerSecond"] == 5
    assert stored_rate(tx, created["id"]) == 5
    read = client.simulate_get(f"{BASE}/{created['id']}", headers=org.admin.headers).json
    assert read["rateLimitPerSecond"] == 5
    listed = client.simulate_get(BASE, headers=org.admin.headers).json["webhookConfigs"]
    assert [item["rateLimitPerSecond"] for item in listed if item["id"] == created["id"]] == [5]
    rotated = client.simulate_post(f"{BASE}/{created['id']}/rotate-secret", headers=org.admin.headers)
    assert rotated.json["rateLimitPerSecond"] == 5


def test_no_limit_unless_asked_and_null_is_no_limit(client, org, tx):
    assert create(client, org)["rateLimitPerSecond"] is None
    unlimited = create(client, org, rateLimitPerSecond=None)
    assert unlimited["rateLimitPerSecond"] is None
    assert stored_rate(tx, unlimited["id"]) is None


def test_put_changes_it_keeps_it_when_not_sent_and_null_clears_it(client, org, tx):
    endpoint = create(client, org, rateLimitPerSecond=5)
    changed = put(client, org, endpoint, rateLimitPerSecond=1000)
    assert changed.status_code == 200, changed.json
    assert changed.json["rateLimitPerSecond"] == 1000
    assert changed.json["updatedAt"] > endpoint["updatedAt"]
    kept = put(client, org, endpoint, description="other fields only")
    assert kept.json["rateLimitPerSecond"] == 1000
    cleared = put(client, org, endpoint, rateLimitPerSecond=None)
    assert cleared.status_code == 200, cleared.json
    assert cleared.json["rateLimitPerSecond"] is None
    assert stored_rate(tx, endpoint["id"]) is None
    again = put(client, org, endpoint, rateLimitPerSecond=1)
    assert again.json["rateLimitPerSecond"] == 1 and stored_rate(tx, endpoint["id"]) == 1


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0, "greater than or equal to 1"),
        (-3, "greater than or equal to 1"),
        (1001, "less than or equal to 1000"),
        (5.5, "integer"),
        ("5", "integer"),
        (True, "integer"),
        ([5], "integer"),
    ],
)
def test_out_of_range_or_not_an_integer_is_a_400_naming_the_field(client, org, value, words):
    for resp in (
        client.simulate_post(BASE, json={"url": URL, "rateLimitPerSecond": value}, headers=org.admin.headers),
        put(client, org, create(client, org, rateLimitPerSecond=5), rateLimitPerSecond=value),
    ):
        assert resp.status_code == 400, resp.json
        assert resp.json["code"] == "validation_error"
        [error] = resp.json["errors"]
        assert error["field"] == "rateLimitPerSecond"
        assert words in error["message"], error


def test_a_refused_update_changes_nothing(client, org, tx):
    endpoint = create(client, org, rateLimitPerSecond=5)
    assert put(client, org, endpoint, description="x", rateLimitPerSecond=0).status_code == 400
    read = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert read["rateLimitPerSecond"] == 5 and read["description"] == ""


def test_the_openapi_document_describes_it_with_examples(client):
    spec = client.simulate_get("/external/v1/openapi.json").json
    schemas = spec["components"]["schemas"]
    for name in ("WebhookConfigCreate", "WebhookConfigUpdate"):
        field = schemas[name]["properties"]["rateLimitPerSecond"]
        integer = [option for option in field.get("anyOf", [field]) if option.get("type") == "integer"]
        assert integer == [{"type": "integer", "minimum": 1, "maximum": 1000}] or (
            integer and integer[0]["minimum"] == 1 and integer[0]["maximum"] == 1000
        ), field
        assert "null" in str(field)
        assert field["examples"] == [5]
    record = schemas["WebhookConfig"]
    assert "rateLimitPerSecond" in record["properties"]
    assert "rateLimitPerSecond" in record["required"]
    # the bodies' examples show it: the create request's and every endpoint answer's
    for name in ("WebhookConfigCreate", "WebhookConfig", "WebhookConfigWithSecret"):
        assert schemas[name]["examples"][0]["rateLimitPerSecond"] == 5, name
