"""Issue 27 at the contract level, the stack as deployed (the api, its relay, RabbitMQ, the dispatcher
under gunicorn and its worker, a real HTTPS receiver): an outage's EXHAUSTED deliveries recovered with
``POST /webhook-configs/{id}/recover`` (each event delivered once more, signed, nothing twice on a
repeated call), the delivery's request as sent beside what the receiver got, and the endpoint's
``GET /webhook-configs/{id}/stats`` counting the attempts made. Admin keys only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import contract_data as data
from contract_client import assert_problem
from contract_webhooks import ATTEMPTS, payload, verifies

OUTAGE = 3


@pytest.fixture(scope="module")
def hook_org(make_org):
    return make_org("Recovery Co")


@pytest.fixture(autouse=True)
def _own_endpoints_only(webhook_api):
    yield
    webhook_api.revoke_registered()


def recover(webhooks, endpoint, key=None, **body):
    return webhooks.hooks.post(f"/webhook-configs/{endpoint.id}/recover", key or endpoint.org.admin, json=body)


def test_an_outage_is_recovered_each_event_once_and_the_stats_count_it(webhooks, hook_org):
    endpoint = webhooks.register(hook_org)
    since = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    webhooks.respond(endpoint.path, 500)  # the outage
    products = data.many(OUTAGE, lambda: webhooks.raise_event(hook_org))
    exhausted = webhooks.wait_deliveries(endpoint, OUTAGE, "EXHAUSTED", timeout=120)
    during = len(webhooks.wait_received(endpoint.path, OUTAGE * ATTEMPTS))

    webhooks.respond(endpoint.path, 200)  # the receiver is back
    resp = recover(webhooks, endpoint, since=since)
    assert resp.status_code == 202, resp.text
    answer = resp.json()
    assert (answer["recovered"], answer["hasMore"]) == (OUTAGE, False)
    assert datetime.fromisoformat(answer["since"]) == datetime.fromisoformat(since)
    redelivered = webhooks.wait_received(endpoint.path, during + OUTAGE)[during:]
    assert all(verifies(endpoint.secret, request) for request in redelivered)
    assert sorted(payload(r)["data"]["id"] for r in redelivered) == sorted(p["id"] for p in products)
    new = [d for d in webhooks.wait_deliveries(endpoint, OUTAGE, "SUCCESS") if d["retryOf"]]
    assert sorted(d["retryOf"] for d in new) == sorted(d["id"] for d in exhausted)
    assert {d["eventId"] for d in new} == {d["eventId"] for d in exhausted}

    again = recover(webhooks, endpoint, since=answer["since"], until=answer["until"])
    assert again.status_code == 202 and again.json()["recovered"] == 0
    webhooks.settle()
    assert len(webhooks.received(endpoint.path)) == during + OUTAGE  # none twice

    # the request as sent: the body and each attempt's headers are what the receiver got
    request = redelivered[0]
    delivery_id = request.headers["x-service-delivery-id"]
    detail = webhooks.hooks.ok("GET", f"/webhook-configs/{endpoint.id}/deliveries/{delivery_id}", hook_org.admin)
    assert detail["request"] == {"method": "POST", "url": webhooks.url(endpoint.path), "body": request.body.decode()}
    [attempt] = detail["attempts"]
    assert {k.lower(): v for k, v in attempt["requestHeaders"].items()}.items() <= request.headers.items()

    stats = webhooks.hooks.ok("GET", f"/webhook-configs/{endpoint.id}/stats", hook_org.admin)
    assert (stats["succeeded"], stats["failed"]) == (OUTAGE, OUTAGE * ATTEMPTS)
    assert len(stats["hours"]) == 24 and sum(h["succeeded"] + h["failed"] for h in stats["hours"]) == OUTAGE * 9
    assert stats["timeToSuccessMs"]["p50"] > 0 and stats["timeToSuccessMs"]["p95"] >= stats["timeToSuccessMs"]["p50"]
    week = webhooks.hooks.ok("GET", f"/webhook-configs/{endpoint.id}/stats", hook_org.admin, params={"window": "7d"})
    assert len(week["hours"]) == 168 and (week["succeeded"], week["failed"]) == (OUTAGE, OUTAGE * ATTEMPTS)


def test_recover_and_stats_are_for_admin_keys_and_refuse_what_they_cannot_do(webhook_api, hook_org):
    endpoint = webhook_api.register(hook_org)
    since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    for member in (hook_org.viewer, hook_org.user):
        assert recover(webhook_api, endpoint, member, since=since).status_code == 403
        assert webhook_api.hooks.get(f"/webhook-configs/{endpoint.id}/stats", member).status_code == 403
    too_old = (datetime.now(UTC) - timedelta(days=31)).isoformat()
    assert assert_problem(recover(webhook_api, endpoint, since=too_old), 400)["errors"][0]["field"] == "since"
    stats = webhook_api.hooks.get(f"/webhook-configs/{endpoint.id}/stats", hook_org.admin, params={"window": "30d"})
    assert assert_problem(stats, 400)["errors"][0]["field"] == "window"
    webhook_api.hooks.delete(f"/webhook-configs/{endpoint.id}", hook_org.admin)
    assert_problem(recover(webhook_api, endpoint, since=since), 409, "webhook_config_revoked")
