"""Spec section 6 for the billing connector's events: every connection change and every push's end
reaches a customer's webhook endpoint like any api event (the connector's outbox, the shared relay,
RabbitMQ, the dispatcher's worker, a real HTTPS receiver), signed, with the envelope's id, type,
version, occurredAt, organizationId and data: ``billing.connection.connected``,
``billing.connection.removed``, ``billing.connection.broken``, ``billing.quote_pushed`` and
``billing.push_failed``. Tokens never travel in an event."""

from __future__ import annotations

from datetime import datetime

import pytest

import contract_data as data
from contract_webhooks import verify

BILLING_TYPES = [
    "billing.connection.connected", "billing.connection.removed", "billing.connection.broken",
    "billing.quote_pushed", "billing.push_failed",
]


@pytest.fixture(scope="module")
def org(make_org):
    return make_org("Billing Events Co")


@pytest.fixture(autouse=True)
def _own_endpoints_only(webhook_api):
    yield
    webhook_api.revoke_registered()


def _events(webhooks, endpoint, count: int) -> list[dict]:
    """The first ``count`` distinct events the endpoint received, verified, in occurredAt order."""
    received = webhooks.wait_received(endpoint.path, count)
    events = {r.headers["x-service-event-id"]: verify(endpoint.secret, r) for r in received}
    return sorted(events.values(), key=lambda e: e["occurredAt"])


def _envelope(event: dict, org) -> None:
    assert set(event) >= {"id", "type", "version", "occurredAt", "organizationId", "data"}
    assert event["organizationId"] == org.id
    assert isinstance(event["version"], int)
    assert datetime.fromisoformat(event["occurredAt"].replace("Z", "+00:00")).tzinfo is not None
    assert "token" not in str(event).lower()


def test_connecting_and_disconnecting_reach_the_customers_endpoint(webhooks, billing, org):
    endpoint = webhooks.register(org, eventTypes=BILLING_TYPES)
    connection = billing.connect(org)
    billing.disconnect(org)
    connected, removed = _events(webhooks, endpoint, 2)
    for event in (connected, removed):
        _envelope(event, org)
    assert connected["type"] == "billing.connection.connected"
    assert {k: connected["data"][k] for k in ("accountId", "status", "connectedBy", "mode")} == {
        "accountId": connection["accountId"], "status": "connected", "connectedBy": org.admin.user_id,
        "mode": "test"}
    assert removed["type"] == "billing.connection.removed"
    assert (removed["data"]["accountId"], removed["data"]["status"], removed["data"]["removedBy"]) == (
        connection["accountId"], "removed", "service")


def test_an_uninstall_on_the_platform_is_an_event_too(webhooks, billing, org):
    account = billing.connect(org)["accountId"]
    endpoint = webhooks.register(org, eventTypes=["billing.connection.removed"])
    billing.stand_in.uninstall(account)
    [removed] = _events(webhooks, endpoint, 1)
    _envelope(removed, org)
    assert (removed["data"]["accountId"], removed["data"]["removedBy"]) == (account, "platform")


def test_a_finished_push_is_an_event_with_the_push_record(webhooks, billing, org):
    billing.connect(org)
    endpoint = webhooks.register(org, eventTypes=["billing.quote_pushed", "billing.push_failed"])
    quote = billing.simple_quote(org)
    pushed = billing.pushed(org.admin, quote["id"])
    hourly = billing.product(org, priceModel="HOURLY", listPrices={"USD": "10.00"})
    unsupported = billing.approved_quote(org, org.user, [data.line(hourly["id"])])
    failed = billing.pushed(org.admin, unsupported["id"])
    events = {e["type"]: e for e in _events(webhooks, endpoint, 2)}
    for event in events.values():
        _envelope(event, org)

    succeeded = events["billing.quote_pushed"]["data"]
    assert (succeeded["id"], succeeded["quoteId"], succeeded["status"]) == (pushed["id"], quote["id"], "succeeded")
    for name in ("billingQuoteId", "reviewUrl", "products", "progress", "warnings"):
        assert succeeded[name] == pushed[name], name

    refused = events["billing.push_failed"]["data"]
    assert (refused["id"], refused["status"]) == (failed["id"], "failed")
    assert refused["error"] == failed["error"] and refused["error"]["code"] == "no_supported_lines"
