"""The billing connector's operations as the console calls them (``backends.billing``: the connection's
status, the start URL of Connect, Disconnect, the recent pushes; ``resources/billing.py``), written as
a consumer-driven contract (Pact) for the connector: ``pacts/console-billing-connector.json``
(committed; the connector's suite verifies it against a real connector server:
services/billing-connector/tests/integration/test_pact_provider.py).

The console calls as the signed-in person (their console credential as ``x-api-key``; the provider
verifies with a key of its own). Only what the console's pages read is in the responses. What is
recorded is compared with the committed file: ``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

import pytest
from pact import Pact, match

from dps_testing.pacts import OCCURRED_AT, ConsumerContract

from dps_console.adapters.backends import Backend, Backends
from dps_console.domain.problems import ServiceRefused

CONTRACT = ConsumerContract("console", "billing-connector")
pact_recorded, pact = CONTRACT.fixtures()
BASE = "/external/v1"
CREDENTIAL = "dps_k3y1d_s3cr3t"
API_KEY = match.regex(CREDENTIAL, regex=r"^dps_[A-Za-z0-9-]+_\S+$")
RETURN_URL = "https://console.example/console/billing"  # the console's public URL + /billing
UUID = "00000000-0000-4000-8000-000000000007"
ONCE = "f" * 43  # the Connect form's one-time token, sent as the Idempotency-Key


def billing(url: str) -> Backend:
    return Backends.from_urls(url, url, url, url + BASE, timeout=5).billing


def test_the_billing_page_shows_the_connection(pact: Pact):
    (
        pact.upon_receiving("the billing connection")
        .given("a connected billing platform")
        .with_request("GET", BASE + "/billing-connection")
        .with_header("x-api-key", API_KEY)
        .will_respond_with(200)
        .with_body({
            "status": match.regex("connected", regex=r"^(connected|broken)$"),
            "accountId": match.str("acct_1234"),
            "mode": match.regex("test", regex=r"^(test|live)$"),
            "connectedAt": match.regex("2027-01-01T10:00:00Z", regex=OCCURRED_AT),
        }, content_type="application/json")
    )
    with pact.serve() as server:
        connection = billing(str(server.url)).call("GET", "/billing-connection", CREDENTIAL)
    assert (connection["status"], connection["accountId"], connection["mode"]) == ("connected", "acct_1234", "test")


def test_the_billing_page_shows_no_connection(pact: Pact):
    (
        pact.upon_receiving("the billing connection when none is connected")
        .given("no billing connection")
        .with_request("GET", BASE + "/billing-connection")
        .with_header("x-api-key", API_KEY)
        .will_respond_with(404)
    )
    with pact.serve() as server, pytest.raises(ServiceRefused) as refused:
        billing(str(server.url)).call("GET", "/billing-connection", CREDENTIAL)
    assert refused.value.problem.status == 404  # the page shows "not connected"


def test_connect_asks_for_the_start_url(pact: Pact):
    (
        pact.upon_receiving("a start URL to connect the billing platform")
        .given("no billing connection")
        .with_request("POST", BASE + "/billing-connection/authorize")
        .with_header("x-api-key", API_KEY)
        .with_header("Idempotency-Key", match.regex(ONCE, regex=r"^[A-Za-z0-9_-]{43}$"))  # the form's one-time token
        .with_body({"returnUrl": RETURN_URL}, content_type="application/json")
        .will_respond_with(200)
        .with_body({"startUrl": match.regex("https://billing.example/start/abc", regex=r"^https?://\S+$")},
                   content_type="application/json")
    )
    with pact.serve() as server:
        answer = billing(str(server.url)).call("POST", "/billing-connection/authorize", CREDENTIAL,
                                               json={"returnUrl": RETURN_URL}, once=ONCE)
    assert answer["startUrl"] == "https://billing.example/start/abc"


def test_disconnect_removes_the_connection(pact: Pact):
    (
        pact.upon_receiving("the removal of the billing connection")
        .given("a connected billing platform")
        .with_request("DELETE", BASE + "/billing-connection")
        .with_header("x-api-key", API_KEY)
        .will_respond_with(204)
    )
    with pact.serve() as server:
        assert billing(str(server.url)).call("DELETE", "/billing-connection", CREDENTIAL) is None


def test_the_pushes_page_lists_the_recent_pushes(pact: Pact):
    push = {
        "quoteId": match.uuid(UUID),
        "createdAt": match.regex("2027-01-01T10:00:00Z", regex=OCCURRED_AT),
        "status": match.regex("queued", regex=r"^(queued|running|succeeded|failed)$"),
        "progress": {
            "linesTotal": match.int(0),
            "productsCreated": match.int(0),
            "pricesCreated": match.int(0),
            "quoteCreated": match.bool(False),
        },
        "warnings": match.type([]),
    }
    (
        pact.upon_receiving("the recent billing pushes")
        .given("a billing push")
        .with_request("GET", BASE + "/billing-pushes")
        .with_query_parameter("limit", "50")
        .with_header("x-api-key", API_KEY)
        .will_respond_with(200)
        .with_body({"billingPushes": match.each_like(push)}, content_type="application/json")
    )
    with pact.serve() as server:
        answer = billing(str(server.url)).call("GET", "/billing-pushes", CREDENTIAL, params={"limit": "50"})
    [first] = answer["billingPushes"]
    assert (first["quoteId"], first["status"], first["progress"]["linesTotal"]) == (UUID, "queued", 0)
