"""The event log (issue 27, Stripe's events API as the model) on the running stack: an api change
that reaches a receiver is in ``GET /events`` for every role of its organization, and ``GET
/events/{id}`` answers the very bytes the receiver got, which the delivery's own signature verifies;
an event no endpoint subscribed to is listed all the same; a receiver that was down catches up from
the list (the reference's recipe: list since a little before the last event handled, fetch the ones
missing); another organization sees none of it. The whole path is real: api, outbox relay, RabbitMQ,
dispatcher worker, receiver."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from contract_client import assert_problem
from contract_webhooks import verify, wait_for


@pytest.fixture(scope="module")
def log_org(make_org):
    return make_org("Event Log Co")


@pytest.fixture(autouse=True)
def _own_endpoints_only(webhook_api):
    yield
    webhook_api.revoke_registered()


def listed(webhooks, member, **params) -> list[dict]:
    return webhooks.hooks.walk("/events", member, "events", limit=500, params=params)


def wait_listed(webhooks, member, event_id: str, **params) -> dict:
    return wait_for(lambda: next((e for e in listed(webhooks, member, **params) if e["id"] == event_id), None),
                    f"event {event_id} in GET /events")


def test_a_delivered_event_is_listed_and_fetched_as_the_very_bytes_the_receiver_verified(webhooks, log_org):
    endpoint = webhooks.register(log_org)
    product = webhooks.raise_event(log_org)
    [request] = webhooks.wait_received(endpoint.path, 1)
    event_id = verify(endpoint.secret, request)["id"]

    for member in (log_org.viewer, log_org.user, log_org.admin):
        listed_event = wait_listed(webhooks, member, event_id, type="product.created")
        assert listed_event["type"] == "product.created" and listed_event["payloadKept"] is True
        assert listed_event["payloadBytes"] == len(request.body)
    resp = webhooks.hooks.get(f"/events/{event_id}", log_org.viewer)

    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.content == request.body
    # what the client fetched is what was signed: the delivery's signature verifies it
    signing = {name: request.headers[name] for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    assert Webhook(endpoint.secret).verify(resp.content, signing)["data"]["id"] == product["id"]


def test_an_event_no_endpoint_was_sent_is_listed_all_the_same(webhooks, make_org):
    quiet = make_org("No Endpoints Co")  # not one webhook config: the dispatcher still keeps its events
    since = datetime.now(UTC) - timedelta(minutes=5)
    product = webhooks.raise_event(quiet)

    def arrived() -> dict | None:
        for event in listed(webhooks, quiet.viewer, createdAfter=since.isoformat()):
            body = webhooks.hooks.ok("GET", f"/events/{event['id']}", quiet.viewer, status=200)
            if body["data"]["id"] == product["id"]:
                return body
        return None

    body = wait_for(arrived, "the product's event in GET /events")
    assert body["type"] == "product.created" and body["organizationId"] == quiet.id


def test_a_receiver_that_was_down_catches_up_from_the_list(webhooks, log_org, org):
    endpoint = webhooks.register(log_org)
    handled = webhooks.raise_event(log_org)
    [first] = webhooks.wait_received(endpoint.path, 1)
    last = verify(endpoint.secret, first)
    last_created = wait_listed(webhooks, log_org.viewer, last["id"])["createdAt"]

    webhooks.respond(endpoint.path, 503)  # the receiver goes down: every attempt fails until exhausted
    missed = [webhooks.raise_event(log_org) for _ in range(2)]
    webhooks.wait_deliveries(endpoint, 2, "EXHAUSTED")
    failed = {request.headers["x-service-event-id"]: request.body for request in webhooks.received(endpoint.path)[1:]}
    assert len(failed) == 2

    # back up: list from a little before the last event handled, fetch every id not handled
    since = (datetime.fromisoformat(last_created) - timedelta(minutes=2)).isoformat()
    ids = [e["id"] for e in listed(webhooks, log_org.viewer, createdAfter=since)]
    assert last["id"] in ids
    caught_up = {}
    for event_id in ids:
        if event_id == last["id"]:
            continue
        resp = webhooks.hooks.get(f"/events/{event_id}", log_org.viewer)
        assert resp.status_code == 200
        caught_up[event_id] = resp.content
    for event_id, body in failed.items():
        assert caught_up[event_id] == body  # the same bytes the failed attempts sent
    products = {json.loads(body)["data"]["id"] for body in caught_up.values()}
    assert {p["id"] for p in missed} <= products and handled["id"] not in products

    # another organization sees none of it
    assert last["id"] not in {e["id"] for e in listed(webhooks, org.viewer)}
    assert_problem(webhooks.hooks.get(f"/events/{last['id']}", org.admin), 404, "not_found")
