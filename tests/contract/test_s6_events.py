"""Spec section 6, events: an api change reaches a registered endpoint over HTTPS as a signed POST
(Standard Webhooks, verified with the ``standardwebhooks`` package as a receiver would) carrying
X-Service-Event-Id (stable across retries), X-Service-Delivery-Id (one per delivery) and
X-Service-Attempt (from 1), and a payload with id, type, version, occurredAt, organizationId and
data. Then the delivery rules: non-2xx and 3xx are failures and retried, redirects are not followed,
test deliveries are sent while PAUSED, rotation applies to the next delivery alone, URLs are checked
at registration. The whole path is real: api, outbox relay, RabbitMQ, dispatcher worker, receiver."""

from __future__ import annotations

from datetime import datetime

import pytest

from contract_client import assert_problem
from contract_webhooks import REDIRECT_TARGET, payload, verifies, verify


@pytest.fixture(scope="module")
def hook_org(make_org):
    return make_org("Events Co")


@pytest.fixture(autouse=True)
def _own_endpoints_only(webhook_api):
    """Each test's endpoints are revoked when it ends: the next test's events reach only its own."""
    yield
    webhook_api.revoke_registered()


def test_an_api_change_reaches_the_receiver_signed(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    product = webhooks.raise_event(hook_org)
    [request] = webhooks.wait_received(endpoint.path, 1)

    event = verify(endpoint.secret, request)  # raises unless the signature is the endpoint's
    assert set(event) >= {"id", "type", "version", "occurredAt", "organizationId", "data"}
    assert event["type"] == "product.created"
    assert event["organizationId"] == hook_org.id
    assert event["data"]["id"] == product["id"]
    assert isinstance(event["version"], int)
    assert datetime.fromisoformat(event["occurredAt"].replace("Z", "+00:00")).tzinfo is not None

    assert request.headers["x-service-event-id"] == event["id"] == request.headers["webhook-id"]
    assert request.headers["x-service-attempt"] == "1"
    assert request.headers["content-type"].startswith("application/json")
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert request.headers["x-service-delivery-id"] == delivery["id"]


def test_every_api_change_reaches_the_endpoint_under_its_own_event_id(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    products = [webhooks.raise_event(hook_org) for _ in range(3)]
    webhooks.wait_deliveries(endpoint, 3, "SUCCESS")
    requests = webhooks.received(endpoint.path)
    events = {}
    for request in requests:  # duplicates are allowed (rule 3): deduplicate on the event id
        events[request.headers["x-service-event-id"]] = verify(endpoint.secret, request)
    assert sorted(e["data"]["id"] for e in events.values()) == sorted(p["id"] for p in products)


def test_two_endpoints_get_the_same_event_id_and_different_delivery_ids(webhooks, hook_org):
    first, second = webhooks.register(hook_org), webhooks.register(hook_org)
    webhooks.raise_event(hook_org)
    [to_first] = webhooks.wait_received(first.path, 1)
    [to_second] = webhooks.wait_received(second.path, 1)
    assert to_first.headers["x-service-event-id"] == to_second.headers["x-service-event-id"]
    assert to_first.headers["x-service-delivery-id"] != to_second.headers["x-service-delivery-id"]
    assert verify(first.secret, to_first) == verify(second.secret, to_second)  # the same payload
    assert not verifies(second.secret, to_first)  # each endpoint signs with its own secret


def test_a_failed_attempt_is_retried_with_the_same_event_id_and_the_next_attempt_number(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 500, 200)
    webhooks.raise_event(hook_org)
    first, second = webhooks.wait_received(endpoint.path, 2)

    assert [first.headers["x-service-attempt"], second.headers["x-service-attempt"]] == ["1", "2"]
    assert first.headers["x-service-event-id"] == second.headers["x-service-event-id"]
    assert first.headers["x-service-delivery-id"] == second.headers["x-service-delivery-id"]  # one delivery
    assert verify(endpoint.secret, first) == verify(endpoint.secret, second)  # each attempt signed
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert delivery["id"] == second.headers["x-service-delivery-id"]
    assert delivery["lastResponseStatus"] == 200


def test_a_redirect_is_a_failure_and_is_not_followed(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 302, 200)  # 302 with a Location on the same receiver
    webhooks.raise_event(hook_org)
    _, second = webhooks.wait_received(endpoint.path, 2)  # the redirect failed: a second attempt
    assert second.headers["x-service-attempt"] == "2"
    webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert webhooks.received(REDIRECT_TARGET) == []  # the Location was never requested


@pytest.mark.parametrize("status", [400, 404, 410, 500, 503])
def test_any_non_2xx_answer_is_a_failed_attempt(webhooks, hook_org, status):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, status, 204)
    webhooks.raise_event(hook_org)
    webhooks.wait_received(endpoint.path, 2)
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert delivery["lastResponseStatus"] == 204  # any 2xx is a success


def test_eight_attempts_then_exhausted_and_never_retried(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, 500)
    webhooks.raise_event(hook_org)
    webhooks.wait_deliveries(endpoint, 1, "EXHAUSTED")
    requests = webhooks.received(endpoint.path)
    assert [r.headers["x-service-attempt"] for r in requests] == [str(n) for n in range(1, 9)]
    assert len({r.headers["x-service-event-id"] for r in requests}) == 1
    assert all(verifies(endpoint.secret, r) for r in requests)
    # a ninth attempt would come one (compressed) gap later; give it several
    webhooks.settle()
    assert len(webhooks.received(endpoint.path)) == 8


def test_test_deliveries_are_sent_while_paused_and_events_are_held(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.set_status(endpoint, "PAUSED")
    product = webhooks.raise_event(hook_org)
    [held] = webhooks.wait_for_deliveries(endpoint, 1)  # the event reached the dispatcher, and was held
    assert held["status"] in ("PENDING", "FAILED")

    test = webhooks.send_test(endpoint)
    [request] = webhooks.wait_received(endpoint.path, 1)
    assert request.headers["x-service-delivery-id"] == test["id"]
    assert payload(request)["type"] != "product.created"  # the test event, not the held one
    assert verifies(endpoint.secret, request)
    webhooks.settle()
    assert len(webhooks.received(endpoint.path)) == 1  # still nothing but the test delivery

    webhooks.set_status(endpoint, "ACTIVE")  # resume: the held event is delivered
    requests = webhooks.wait_received(endpoint.path, 2)
    event = verify(endpoint.secret, requests[1])
    assert event["data"]["id"] == product["id"]
    assert requests[1].headers["x-service-delivery-id"] == held["id"]


def test_events_while_revoked_are_not_delivered_nor_recorded(webhooks, hook_org):
    revoked, witness = webhooks.register(hook_org), webhooks.register(hook_org)
    webhooks.hooks.ok("DELETE", f"/webhook-configs/{revoked.id}", hook_org.admin, status=(200, 204))
    webhooks.raise_event(hook_org)
    webhooks.wait_received(witness.path, 1)  # the event went through the dispatcher
    webhooks.wait_deliveries(witness, 1, "SUCCESS")
    assert webhooks.deliveries(revoked) == []
    assert webhooks.received(revoked.path) == []


def test_rotation_applies_to_the_next_delivery_with_no_overlap(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.raise_event(hook_org)
    [before] = webhooks.wait_received(endpoint.path, 1)
    assert verifies(endpoint.secret, before)

    rotated = webhooks.hooks.ok("POST", f"/webhook-configs/{endpoint.id}/rotate-secret", hook_org.admin, status=200)
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != endpoint.secret
    webhooks.raise_event(hook_org)
    [_, after] = webhooks.wait_received(endpoint.path, 2)
    assert verifies(rotated["secret"], after)
    assert not verifies(endpoint.secret, after)  # the old secret stopped signing at once


def test_an_attempt_past_the_timeout_fails_and_the_retry_is_signed_with_the_rotated_secret(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    webhooks.respond(endpoint.path, "hang", 200)  # no answer to the first attempt: it times out (10 s)
    webhooks.raise_event(hook_org)
    [first] = webhooks.wait_received(endpoint.path, 1)
    assert verifies(endpoint.secret, first)
    rotated = webhooks.hooks.ok("POST", f"/webhook-configs/{endpoint.id}/rotate-secret", hook_org.admin, status=200)
    _, retry = webhooks.wait_received(endpoint.path, 2)
    assert retry.headers["x-service-attempt"] == "2"
    assert retry.headers["x-service-event-id"] == first.headers["x-service-event-id"]
    assert verifies(rotated["secret"], retry)
    assert not verifies(endpoint.secret, retry)
    [delivery] = webhooks.wait_deliveries(endpoint, 1, "SUCCESS")
    assert delivery["lastResponseStatus"] == 200


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8443/hooks",  # not https
        "https://10.0.0.1/hooks",  # private
        "https://192.168.1.10/hooks",
        "https://172.16.0.1/hooks",
        "https://169.254.169.254/latest/meta-data",  # link-local (cloud metadata)
        "https://[fe80::1]/hooks",
        "https://[fd00::1]/hooks",
        "https://[::1]/hooks",  # loopback (the suite allows 127.0.0.0/8 only, for its receiver)
    ],
)
def test_url_is_validated_at_registration(webhook_api, org, url):
    body = assert_problem(webhook_api.hooks.post("/webhook-configs", org.admin, json={"url": url}), 400)
    assert "url" in str(body).lower()


def test_url_is_validated_when_changed(webhook_api, org):
    endpoint = webhook_api.register(org)
    path = f"/webhook-configs/{endpoint.id}"
    for url in ("http://127.0.0.1/hooks", "https://10.1.2.3/hooks"):
        assert_problem(webhook_api.hooks.put(path, org.admin, json={"url": url}), 400)
    assert webhook_api.record(endpoint)["url"] == endpoint.record["url"]
    webhook_api.hooks.ok("DELETE", path, org.admin, status=(200, 204))
