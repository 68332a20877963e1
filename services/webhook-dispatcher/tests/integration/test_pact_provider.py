"""The dispatcher verifies what the console reads from it, as its Pact contract says
(``pacts/console-webhook-dispatcher.json``, written by the console's own test): a real dispatcher
server on a free port (its test transaction, rolled back after; keys checked by the real api of this
suite), each provider state made through the dispatcher's own operations (an endpoint added, a test
event sent) and answering the ids the verifier puts in the paths, and the pact core's verifier
replaying every interaction against the server with a key of an organization of the api.

A change of what the dispatcher serves that breaks what the console reads fails here.
"""

from __future__ import annotations

from typing import Any

import falcon.testing
import pytest

from dps_testing.pacts import State, state_changes, verify_http
from dps_testing.pacts import served as serving

from dps_webhooks.composition import build_http

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"  # on loopback, which this suite's dispatcher allows


class States:
    """The provider states, made through the dispatcher itself as the organization's admin."""

    def __init__(self, client: falcon.testing.TestClient, headers: dict[str, str]):
        self._client = client
        self._headers = headers

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


@pytest.fixture
def app(settings, tx, monkeypatch) -> Any:
    monkeypatch.setenv("PACT_DO_NOT_TRACK", "true")  # the pact core's usage report: no call out of the tests
    return build_http(settings, tx=tx)


def test_the_consoles_calls(app, org):
    states = States(falcon.testing.TestClient(app), org.admin.headers)
    handlers: dict[str, State] = {
        "an organization": states.an_organization,
        "a webhook endpoint": states.an_endpoint,
        "a webhook delivery": states.a_delivery,
    }
    with serving(app) as dispatcher, serving(state_changes(handlers)) as state_url:
        verify_http("webhook-dispatcher", "console", dispatcher, state_url, org.admin.headers)
