"""Spec sections 2 and 3 for webhooks: the endpoint record (id, url, status, consecutiveFailures,
disabledReason) and its states (ACTIVE, PAUSED, DISABLED), the delivery record (status,
lastResponseStatus, lastResponseExcerpt, lastErrorMessage, lastDurationMs, lastAttemptedAt,
nextAttemptAt) and its states (PENDING, SUCCESS, FAILED, EXHAUSTED); the signing secret shown once;
admin keys only; another organization's endpoint is not found. Deliveries come from real api
changes through the relay, RabbitMQ and the dispatcher's worker, to a real HTTPS receiver."""

from __future__ import annotations

from datetime import datetime

import pytest

import contract_data as data
from contract_client import assert_problem
from contract_webhooks import ATTEMPTS, payload, verifies

ENDPOINT_FIELDS = {"id", "url", "status", "consecutiveFailures", "disabledReason"}
DELIVERY_FIELDS = {
    "status", "lastResponseStatus", "lastResponseExcerpt", "lastErrorMessage", "lastDurationMs",
    "lastAttemptedAt", "nextAttemptAt",
}
DISABLE_AFTER = 20  # consecutive failures (spec section 8)


@pytest.fixture(scope="module")
def hook_org(make_org):
    return make_org("Hooks Co")


@pytest.fixture(autouse=True)
def _own_endpoints_only(webhook_api):
    """Each test's endpoints are revoked when it ends: the next test's events reach only its own."""
    yield
    webhook_api.revoke_registered()


def _timestamp(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None, value
    return parsed


# --- the endpoint record ------------------------------------------------------------------------


def test_a_new_endpoint_record_is_active_with_no_failures(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    created = endpoint.record
    assert set(created) >= ENDPOINT_FIELDS
    assert created["url"] == webhook_api.url(endpoint.path)
    assert (created["status"], created["consecutiveFailures"], created["disabledReason"]) == ("ACTIVE", 0, None)
    assert isinstance(created["id"], str) and created["id"]

    read = webhook_api.record(endpoint)
    assert {name: read[name] for name in ENDPOINT_FIELDS} == {name: created[name] for name in ENDPOINT_FIELDS}
    listed = webhook_api.hooks.walk("/webhook-configs", hook_org.admin, "webhookConfigs")
    [item] = [item for item in listed if item["id"] == endpoint.id]
    assert {name: item[name] for name in ENDPOINT_FIELDS} == {name: created[name] for name in ENDPOINT_FIELDS}


def test_the_signing_secret_is_shown_once(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    assert endpoint.secret.startswith("whsec_")
    path = f"/webhook-configs/{endpoint.id}"
    shown_again = [
        webhook_api.record(endpoint),
        *webhook_api.hooks.walk("/webhook-configs", hook_org.admin, "webhookConfigs"),
        webhook_api.hooks.ok("PUT", path, hook_org.admin, json={"status": "ACTIVE"}, status=200),
    ]
    for body in shown_again:
        assert "secret" not in body
        assert endpoint.secret not in str(body)


def test_rotate_secret_returns_a_new_secret_once(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    rotated = webhook_api.hooks.ok("POST", f"/webhook-configs/{endpoint.id}/rotate-secret", hook_org.admin, status=200)
    again = webhook_api.hooks.ok("POST", f"/webhook-configs/{endpoint.id}/rotate-secret", hook_org.admin, status=200)
    assert len({endpoint.secret, rotated["secret"], again["secret"]}) == 3
    assert all(s.startswith("whsec_") for s in (rotated["secret"], again["secret"]))
    assert "secret" not in webhook_api.record(endpoint)


def test_webhook_routes_need_an_admin_key(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    base = f"/webhook-configs/{endpoint.id}"
    calls = [
        ("GET", "/webhook-configs", None), ("POST", "/webhook-configs", {"url": webhook_api.url("/x")}),
        ("GET", base, None), ("PUT", base, {"status": "PAUSED"}), ("DELETE", base, None),
        ("POST", base + "/rotate-secret", None), ("POST", base + "/test", None), ("GET", base + "/deliveries", None),
    ]
    for member in (hook_org.user, hook_org.viewer):
        for method, path, body in calls:
            problem = assert_problem(webhook_api.hooks.call(method, path, member, json=body), 403, "missing_scope")
            assert problem.get("requiredScope") == "webhooks:manage", problem
    for method, path, body in calls:
        assert_problem(webhook_api.hooks.call(method, path, None, json=body), 401)
    assert webhook_api.record(endpoint)["status"] == "ACTIVE"  # nothing the refused calls asked for happened
    assert webhook_api.deliveries(endpoint) == []


def test_another_organizations_endpoint_is_not_found(webhook_api, hook_org, other_org):
    endpoint = webhook_api.register(hook_org)
    base = f"/webhook-configs/{endpoint.id}"
    calls = [
        ("GET", base, None), ("PUT", base, {"status": "PAUSED"}), ("DELETE", base, None),
        ("POST", base + "/rotate-secret", None), ("POST", base + "/test", None), ("GET", base + "/deliveries", None),
    ]
    for method, path, body in calls:
        assert_problem(webhook_api.hooks.call(method, path, other_org.admin, json=body), 404)
    listed = webhook_api.hooks.walk("/webhook-configs", other_org.admin, "webhookConfigs")
    assert endpoint.id not in {item["id"] for item in listed}
    assert webhook_api.record(endpoint)["status"] == "ACTIVE"
    assert webhook_api.received(endpoint.path) == []


# --- endpoint states ----------------------------------------------------------------------------


def test_pause_and_resume(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    assert webhook_api.set_status(endpoint, "PAUSED")["status"] == "PAUSED"
    assert webhook_api.record(endpoint)["status"] == "PAUSED"
    assert webhook_api.set_status(endpoint, "ACTIVE")["status"] == "ACTIVE"
    assert webhook_api.record(endpoint)["status"] == "ACTIVE"


def test_revocation_disables_the_endpoint(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    webhook_api.hooks.ok("DELETE", f"/webhook-configs/{endpoint.id}", hook_org.admin, status=(200, 204))
    assert webhook_api.record(endpoint)["status"] == "DISABLED"


def test_an_exhausted_delivery_counts_once_and_a_success_resets_the_count(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 500)
    webhooks.raise_event(hook_org)
    webhooks.wait_deliveries(endpoint, 1, "EXHAUSTED")
    assert webhooks.wait_record(endpoint, "consecutiveFailures 1", lambda r: r["consecutiveFailures"] == 1)["status"] == "ACTIVE"

    webhooks.respond(endpoint.path, 200)  # the receiver is fixed
    webhooks.raise_event(hook_org)
    webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert webhooks.wait_record(endpoint, "consecutiveFailures 0", lambda r: r["consecutiveFailures"] == 0)


def test_setting_active_clears_the_failure_count(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 500)
    webhooks.raise_event(hook_org)
    webhooks.wait_record(endpoint, "consecutiveFailures 1", lambda r: r["consecutiveFailures"] == 1)
    answer = webhooks.set_status(endpoint, "ACTIVE")
    assert (answer["status"], answer["consecutiveFailures"], answer["disabledReason"]) == ("ACTIVE", 0, None)
    assert webhooks.record(endpoint)["consecutiveFailures"] == 0


def test_twenty_consecutive_failures_disable_the_endpoint_and_reactivation_does_not_backfill(webhooks, hook_org):
    endpoint, witness = webhooks.register(hook_org), webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 500)
    data.many(DISABLE_AFTER, lambda: webhooks.raise_event(hook_org))
    webhooks.wait_deliveries(endpoint, DISABLE_AFTER, "EXHAUSTED", timeout=120)
    disabled = webhooks.wait_record(endpoint, "DISABLED", lambda r: r["status"] == "DISABLED")
    assert disabled["consecutiveFailures"] == DISABLE_AFTER
    assert isinstance(disabled["disabledReason"], str) and disabled["disabledReason"]
    webhooks.wait_deliveries(witness, DISABLE_AFTER, "SUCCESS")  # the other endpoint was unaffected
    assert webhooks.record(witness)["status"] == "ACTIVE"

    received_while_enabled = len(webhooks.received(endpoint.path))
    assert received_while_enabled == DISABLE_AFTER * ATTEMPTS  # eight attempts each, no more
    dropped = webhooks.raise_event(hook_org)  # while DISABLED: not delivered, never backfilled
    webhooks.wait_deliveries(witness, DISABLE_AFTER + 1, "SUCCESS")
    assert len(webhooks.deliveries(endpoint)) == DISABLE_AFTER

    webhooks.respond(endpoint.path, 200)  # the receiver is fixed
    reactivated = webhooks.set_status(endpoint, "ACTIVE")
    assert (reactivated["status"], reactivated["consecutiveFailures"], reactivated["disabledReason"]) == ("ACTIVE", 0, None)
    after = webhooks.raise_event(hook_org)
    [request] = webhooks.wait_received(endpoint.path, received_while_enabled + 1)[received_while_enabled:]
    assert payload(request)["data"]["id"] == after["id"] != dropped["id"]
    webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    webhooks.settle()
    ids = [payload(r)["data"]["id"] for r in webhooks.received(endpoint.path)[received_while_enabled:]]
    assert ids == [after["id"]]


# --- the delivery record ------------------------------------------------------------------------


def test_a_successful_delivery_record(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.raise_event(hook_org)
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert set(delivery) >= DELIVERY_FIELDS
    assert delivery["lastResponseStatus"] == 200
    assert delivery["lastResponseExcerpt"].startswith('{"received"')  # what the receiver answered
    assert delivery["lastErrorMessage"] is None
    assert isinstance(delivery["lastDurationMs"], int) and delivery["lastDurationMs"] >= 0
    _timestamp(delivery["lastAttemptedAt"])
    assert delivery["nextAttemptAt"] is None  # nothing more is scheduled


def test_a_failed_attempt_is_recorded_and_the_next_one_scheduled(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    # the first attempt fails; the receiver leaves the second unanswered (it times out after 10 s)
    # while the record is read, and the third succeeds
    webhooks.respond(endpoint.path, 503, "hang", 200)
    webhooks.raise_event(hook_org)
    first, _ = webhooks.wait_received(endpoint.path, 2)

    [delivery] = webhooks.deliveries(endpoint)
    assert delivery["status"] in ("PENDING", "FAILED")  # between attempts; the exact moment is not shown
    assert delivery["lastResponseStatus"] == 503
    assert delivery["lastResponseExcerpt"].startswith('{"error"')
    assert isinstance(delivery["lastErrorMessage"], str) and delivery["lastErrorMessage"]
    assert isinstance(delivery["lastDurationMs"], int) and delivery["lastDurationMs"] >= 0
    assert _timestamp(delivery["lastAttemptedAt"]) >= _timestamp(payload(first)["occurredAt"])
    assert _timestamp(delivery["nextAttemptAt"]) >= _timestamp(delivery["lastAttemptedAt"])

    [done] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert done["id"] == delivery["id"]
    assert len(webhooks.received(endpoint.path)) == 3  # the timed-out attempt was retried
    assert (done["lastResponseStatus"], done["lastErrorMessage"], done["nextAttemptAt"]) == (200, None, None)


def test_an_exhausted_delivery_record(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 500)
    webhooks.raise_event(hook_org)
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "EXHAUSTED")
    assert len(webhooks.received(endpoint.path)) == ATTEMPTS
    assert delivery["lastResponseStatus"] == 500
    assert delivery["lastResponseExcerpt"].startswith('{"error"')
    assert isinstance(delivery["lastErrorMessage"], str) and delivery["lastErrorMessage"]
    _timestamp(delivery["lastAttemptedAt"])
    assert delivery["nextAttemptAt"] is None  # abandoned, never retried


def test_a_redirect_is_recorded_as_a_failure(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 302)
    webhooks.raise_event(hook_org)
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "EXHAUSTED")
    assert delivery["lastResponseStatus"] == 302
    assert webhooks.wait_record(endpoint, "consecutiveFailures 1", lambda r: r["consecutiveFailures"] == 1)


def test_deliveries_are_listed_newest_first(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    delivery_ids = []
    for count in range(1, 5):  # one at a time, so the order they were made in is known
        webhooks.raise_event(hook_org)
        delivery_ids.append(webhooks.wait_received(endpoint.path, count)[-1].headers["x-service-delivery-id"])
    newest_first = list(reversed(delivery_ids))
    assert [d["id"] for d in webhooks.deliveries(endpoint)] == newest_first
    paged = webhooks.hooks.walk(f"/webhook-configs/{endpoint.id}/deliveries", hook_org.admin, "deliveries", limit=1)
    assert [d["id"] for d in paged] == newest_first


def test_a_test_delivery_is_signed_and_recorded(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    test = webhooks.send_test(endpoint)
    [request] = webhooks.wait_received(endpoint.path, 1)
    assert verifies(endpoint.secret, request)
    assert request.headers["x-service-attempt"] == "1"
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert delivery["id"] == test["id"] == request.headers["x-service-delivery-id"]
