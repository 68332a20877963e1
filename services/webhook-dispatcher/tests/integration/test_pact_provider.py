"""The dispatcher verifies what the console reads from it, as its Pact contract says
(``pacts/console-webhook-dispatcher.json``, written by the console's own test): a real dispatcher
server on a free port (its test transaction, rolled back after; keys checked by the real api of this
suite), each provider state made through the dispatcher's own operations (an endpoint added, a test
event sent, an api event accepted as the consumer does) and answering the ids the verifier puts in
the paths, and the pact core's verifier replaying every interaction against the server with a key of
an organization of the api. What only the delivery worker or time makes (a delivery given up after
its 8 attempts, an attempt made and signed, an endpoint disabled by its failures) is written to the
rows as the worker records it, in the same rolled-back transaction.

A change of what the dispatcher serves that breaks what the console reads fails here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import falcon.testing
import pytest
from sqlalchemy import select, update

from dps_common.db import Transactions
from dps_testing.pacts import State, state_changes, verify_http
from dps_testing.pacts import served as serving

from dps_webhooks.composition import build_http
from dps_webhooks.db.models import DeliveryAttempt, WebhookDelivery, WebhookEndpoint

from webhook_helpers import accept_event, incoming

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"  # on loopback, which this suite's dispatcher allows


class States:
    """The provider states, made through the dispatcher itself as the organization's admin."""

    def __init__(self, client: falcon.testing.TestClient, headers: dict[str, str], tx: Transactions,
                 organization_id: str):
        self._client = client
        self._headers = headers
        self._tx = tx
        self._organization_id = UUID(organization_id)

    def _post(self, path: str, status: int, body: Any = None) -> dict[str, Any]:
        resp = self._client.simulate_post(path, json=body, headers=self._headers)
        assert resp.status_code == status, resp.json
        return dict(resp.json)

    def an_organization(self, params: dict[str, Any]) -> dict[str, str]:
        return {}

    def an_endpoint(self, params: dict[str, Any]) -> dict[str, str]:
        body = {"url": URL, "description": "Deal desk", "eventTypes": ["quote.approved"]}
        return {"endpointId": self._post(BASE, 201, body)["id"]}

    def a_delivery(self, params: dict[str, Any]) -> dict[str, str]:
        endpoint = self.an_endpoint(params)
        delivery = self._post(f"{BASE}/{endpoint['endpointId']}/test", 202)
        return {**endpoint, "deliveryId": delivery["id"]}

    def a_rate_limited_endpoint(self, params: dict[str, Any]) -> dict[str, str]:
        body = {"url": URL, "description": "Deal desk", "eventTypes": ["quote.approved"], "rateLimitPerSecond": 5}
        return {"endpointId": self._post(BASE, 201, body)["id"]}

    def _event_delivery(self, endpoint_id: str, created_ago: timedelta) -> UUID:
        """An api event of the endpoint's type accepted as the consumer does; its delivery created
        ``created_ago`` (the wall clock's, not the test transaction's start)."""
        with self._tx() as session:
            assert accept_event(session, incoming(self._organization_id)) >= 1
            delivery_id = session.scalars(select(WebhookDelivery.id).where(
                WebhookDelivery.endpoint_id == UUID(endpoint_id)).order_by(WebhookDelivery.id.desc())).first()
            assert delivery_id is not None
            session.execute(update(WebhookDelivery).where(WebhookDelivery.id == delivery_id)
                            .values(created_at=datetime.now(UTC) - created_ago))
        return delivery_id

    def _attempted(self, delivery_id: UUID, *, status: int, final: str) -> None:
        """One attempt as the worker records it (signed: its webhook-timestamp and signature kept)."""
        at = datetime.now(UTC) - timedelta(minutes=1)
        with self._tx() as session:
            session.add(DeliveryAttempt(delivery_id=delivery_id, attempt=1, attempted_at=at, response_status=status,
                                        response_excerpt="ok" if status < 300 else "busy", duration_ms=84,
                                        error_message=None if status < 300 else f"HTTP {status}",
                                        webhook_timestamp=int(at.timestamp()),
                                        webhook_signature="v1,c2lnbmF0dXJlIGFzIHNlbnQ="))
            session.execute(update(WebhookDelivery).where(WebhookDelivery.id == delivery_id).values(
                status=final, attempt_count=1 if final == "SUCCESS" else 8, next_attempt_at=None, completed_at=at,
                last_response_status=status, last_attempted_at=at, last_duration_ms=84))

    def an_endpoint_with_an_exhausted_delivery(self, params: dict[str, Any]) -> dict[str, str]:
        endpoint = self.an_endpoint(params)
        delivery_id = self._event_delivery(endpoint["endpointId"], timedelta(minutes=10))
        self._attempted(delivery_id, status=503, final="EXHAUSTED")
        now = datetime.now(UTC)
        return {**endpoint, "since": _rfc3339(now - timedelta(hours=1)), "until": _rfc3339(now - timedelta(minutes=5))}

    def a_disabled_endpoint(self, params: dict[str, Any]) -> dict[str, str]:
        endpoint = self.an_endpoint(params)
        with self._tx() as session:  # as the worker disables it after its consecutive failures
            session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == UUID(endpoint["endpointId"])).values(
                status="DISABLED", consecutive_failures=100, disabled_reason="100 consecutive failed attempts"))
        return {**endpoint, "since": _rfc3339(datetime.now(UTC) - timedelta(hours=1))}

    def an_endpoint_with_traffic(self, params: dict[str, Any]) -> dict[str, str]:
        endpoint = self.an_endpoint(params)
        self._attempted(self._event_delivery(endpoint["endpointId"], timedelta(minutes=2)), status=200, final="SUCCESS")
        return endpoint

    def an_attempted_delivery(self, params: dict[str, Any]) -> dict[str, str]:
        endpoint = self.an_endpoint(params)
        delivery_id = self._event_delivery(endpoint["endpointId"], timedelta(minutes=2))
        self._attempted(delivery_id, status=200, final="SUCCESS")
        return {**endpoint, "deliveryId": str(delivery_id)}


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def app(settings, tx, monkeypatch) -> Any:
    monkeypatch.setenv("PACT_DO_NOT_TRACK", "true")  # the pact core's usage report: no call out of the tests
    return build_http(settings, tx=tx)


def test_the_consoles_calls(app, org, tx):
    states = States(falcon.testing.TestClient(app), org.admin.headers, tx, org.id)
    handlers: dict[str, State] = {
        "an organization": states.an_organization,
        "a webhook endpoint": states.an_endpoint,
        "a webhook delivery": states.a_delivery,
        "a webhook endpoint limited to 5 requests a second": states.a_rate_limited_endpoint,
        "a webhook endpoint with an exhausted delivery": states.an_endpoint_with_an_exhausted_delivery,
        "a disabled webhook endpoint": states.a_disabled_endpoint,
        "a webhook endpoint with traffic": states.an_endpoint_with_traffic,
        "a webhook delivery that was attempted": states.an_attempted_delivery,
    }
    with serving(app) as dispatcher, serving(state_changes(handlers)) as state_url:
        verify_http("webhook-dispatcher", "console", dispatcher, state_url, org.admin.headers)
