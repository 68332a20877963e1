"""The connector verifies what its consumers read from it, as their Pact contracts say (``pacts/``,
written by the consumers' own tests): the console's calls (``console-billing-connector.json``) replayed
by the pact core's verifier against the real connector server (``served``: committed data, the
billing platform stand-in, the test api for keys), each provider state made through the connector's
own operations (the connect flow on the stand-in, Disconnect, a push request); and the dispatcher's
message pact (``webhook-dispatcher-billing-connector.json``) with the ``billing.*`` events its outbox
relay would publish after a real connect, pushes (the connector's worker) and disconnect (the body it
claims from the outbox and the ``X-Request-Id`` header it sends with it).

A change of what the connector serves or publishes that breaks what a consumer reads fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from dps_testing.pacts import State, outbox_messages, state_changes, verify_http, verify_messages
from dps_testing.pacts import served as serving

from billing_helpers import connect, line, quote
from push_helpers import request_push, wait_for, worker_thread

CONNECTION = "/external/v1/billing-connection"


class States:
    """The provider states, each making the world it names for one organization's admin."""

    def __init__(self, served: str, fake_api: Any, stand_in: Any):
        self._served, self.fake_api, self._stand_in = served, fake_api, stand_in
        self.org = fake_api.organization()

    def _connection(self, method: str) -> requests.Response:
        return requests.request(method, self._served + CONNECTION, headers={"x-api-key": self.org.admin.key}, timeout=10)

    def connected(self, params: dict[str, Any]) -> dict[str, str]:
        if self._connection("GET").status_code == 404:
            connect(self._served, self.org.admin.key, self._stand_in.install())
        return {}

    def not_connected(self, params: dict[str, Any]) -> dict[str, str]:
        if self._connection("GET").status_code == 200:
            assert self._connection("DELETE").status_code == 204
        return {}

    def a_push(self, params: dict[str, Any]) -> dict[str, str]:
        self.connected(params)
        snapshot = quote(self.org.id, self.org.user.user_id, [line()])
        self.fake_api.put_quote(snapshot)
        request_push(self._served, self.org.admin.key, snapshot)
        return {}


@pytest.fixture
def states(served, fake_api, stand_in) -> States:
    return States(served, fake_api, stand_in)


def test_the_consoles_calls(served, states):
    handlers: dict[str, State] = {
        "a connected billing platform": states.connected,
        "no billing connection": states.not_connected,
        "a billing push": states.a_push,
    }
    with serving(state_changes(handlers)) as state_url:
        verify_http("billing-connector", "console", served, state_url, {"x-api-key": states.org.admin.key})


@pytest.fixture
def disconnected(states, served, settings) -> Iterator[Any]:
    """An organization that connected, pushed a quote (the connector's worker in a thread, to the
    stand-in), asked for another push and disconnected before it ran (that push fails): its outbox
    holds an event of each."""
    pushed, stranded = (quote(states.org.id, states.org.user.user_id, [line()]) for _ in range(2))
    states.connected({})
    for snapshot in (pushed, stranded):
        states.fake_api.put_quote(snapshot)
    key = states.org.admin.key
    first = request_push(served, key, pushed)
    with worker_thread(settings):
        assert wait_for(served, key, pushed.id, first["id"])["status"] == "succeeded"
    second = request_push(served, key, stranded)
    states.not_connected({})
    with worker_thread(settings):
        assert wait_for(served, key, stranded.id, second["id"])["status"] == "failed"
    yield states.org


def test_the_webhook_dispatchers_events(disconnected, committed_tx):
    types = ("billing.connection.connected", "billing.quote_pushed", "billing.push_failed",
             "billing.connection.removed")
    verify_messages("billing-connector", "webhook-dispatcher", outbox_messages(committed_tx, disconnected.id, types))
