"""The dispatcher's OpenAPI document against what it enforces: every operation is documented with its
scope (``webhooks:manage``; the event log ``events:read``), and every documented scope is enforced
(403 naming it without, never a scope 403 with it)."""

import re

import pytest

from dps_common.auth.scopes import Role
from dps_common.openapi.components import inline_refs
from dps_testing.openapi_checks import (
    assert_every_request_body_has_a_valid_example,
    assert_every_responder_documented,
    assert_missing_key_refused,
    assert_scopes_enforced,
)

OPERATIONS = {
    ("get", "/webhook-configs"),
    ("post", "/webhook-configs"),
    ("get", "/webhook-configs/{webhook_config_id}"),
    ("put", "/webhook-configs/{webhook_config_id}"),
    ("delete", "/webhook-configs/{webhook_config_id}"),
    ("post", "/webhook-configs/{webhook_config_id}/rotate-secret"),
    ("post", "/webhook-configs/{webhook_config_id}/test"),
    ("post", "/webhook-configs/{webhook_config_id}/recover"),
    ("get", "/webhook-configs/{webhook_config_id}/stats"),
    ("get", "/webhook-configs/{webhook_config_id}/deliveries"),
    ("get", "/webhook-configs/{webhook_config_id}/deliveries/{delivery_id}"),
    ("post", "/webhook-configs/{webhook_config_id}/deliveries/{delivery_id}/retry"),
    ("get", "/webhook-event-types"),
    ("get", "/events"),
    ("get", "/events/{event_id}"),
}
# every role reads the event log; everything else is the admin's
READ_BY_EVERY_ROLE = {("get", "/events"), ("get", "/events/{event_id}")}


def document(client):
    resp = client.simulate_get("/external/v1/openapi.json")
    assert resp.status_code == 200
    return resp.json


def test_every_request_body_has_an_example_the_server_accepts(app, client):
    assert assert_every_request_body_has_a_valid_example(app, document(client)) == 3


def test_document_lists_every_operation_with_its_scope_and_its_errors(client):
    doc = document(client)
    assert doc["openapi"].startswith("3.1")
    assert doc["servers"] == [{"url": "/external/v1"}]
    assert doc["components"]["securitySchemes"]["apiKey"] == {"type": "apiKey", "in": "header", "name": "x-api-key"}
    operations = {(m, p): op for p, item in doc["paths"].items() for m, op in item.items()}
    assert set(operations) == OPERATIONS
    for (method, path), op in operations.items():
        scope = "events:read" if (method, path) in READ_BY_EVERY_ROLE else "webhooks:manage"
        assert op["x-required-scopes"] == [scope], (method, path)
        assert {"401", "403"} <= set(op["responses"]), (method, path)
        if "{" in path:
            assert "404" in op["responses"], (method, path)
        if "requestBody" in op:
            assert {"400", "413", "415"} <= set(op["responses"]), (method, path)
        for ref in re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', str(op).replace("'", '"')):
            assert ref in doc["components"]["schemas"], ref
    whole = inline_refs(doc)["paths"]
    paging = {p["name"]: p for p in whole["/webhook-configs"]["get"]["parameters"]}
    assert paging["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}
    paging = {p["name"]: p for p in whole["/webhook-configs/{webhook_config_id}/deliveries"]["get"]["parameters"]}
    assert paging["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}
    assert paging["status"]["schema"]["enum"] == ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"]
    paging = {p["name"]: p for p in whole["/events"]["get"]["parameters"]}
    assert paging["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}
    assert {"type", "createdAfter", "createdBefore"} <= set(paging)
    assert "409" in operations[("get", "/events/{event_id}")]["responses"]
    assert set(operations[("post", "/webhook-configs")]["responses"]) >= {"201"}
    assert "204" in operations[("delete", "/webhook-configs/{webhook_config_id}")]["responses"]
    assert "202" in operations[("post", "/webhook-configs/{webhook_config_id}/test")]["responses"]
    recover = operations[("post", "/webhook-configs/{webhook_config_id}/recover")]
    assert {"202", "409"} <= set(recover["responses"])
    window = {p["name"]: p for p in whole["/webhook-configs/{webhook_config_id}/stats"]["get"]["parameters"]}["window"]
    assert window["schema"] == {"type": "string", "enum": ["24h", "7d"], "default": "24h"}


def test_documented_records_carry_every_spec_field(client):
    schemas = inline_refs(document(client))["components"]["schemas"]
    endpoint = schemas["WebhookConfig"]["properties"]
    assert {"id", "url", "status", "consecutiveFailures", "disabledReason"} <= set(endpoint)
    assert endpoint["status"]["enum"] == ["ACTIVE", "PAUSED", "DISABLED"]
    assert "secret" not in endpoint
    assert "secret" in schemas["WebhookConfigWithSecret"]["properties"]
    delivery = schemas["Delivery"]["properties"]
    assert {
        "status", "lastResponseStatus", "lastResponseExcerpt", "lastErrorMessage", "lastDurationMs",
        "lastAttemptedAt", "nextAttemptAt",
    } <= set(delivery)  # fmt: skip
    assert delivery["status"]["enum"] == ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"]
    assert {"attempts", "request"} <= set(schemas["DeliveryDetail"]["properties"])
    assert "requestHeaders" in schemas["DeliveryAttempt"]["properties"]
    assert set(schemas["WebhookRecovery"]["properties"]) == {"recovered", "hasMore", "since", "until"}
    assert set(schemas["WebhookConfigStats"]["properties"]) == {
        "webhookConfigId", "window", "from", "until", "hours", "succeeded", "failed", "timeToSuccessMs",
    }  # fmt: skip
    for name in ("WebhookRecoverRequest", "WebhookRecovery", "WebhookConfigStats", "DeliveryDetail"):
        assert schemas[name]["examples"], name


def test_every_responder_is_documented(app):
    assert_every_responder_documented(app)


def test_documented_scopes_are_what_the_server_enforces(client, org):
    keys = {Role.ADMIN: org.admin.headers, Role.USER: org.user.headers, Role.VIEW_ONLY: org.viewer.headers}
    assert assert_scopes_enforced(client, document(client), keys) == 3 * len(OPERATIONS)


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE"])
def test_every_operation_refuses_a_missing_key_with_the_spec_message(client, method):
    assert assert_missing_key_refused(client, document(client), method)
