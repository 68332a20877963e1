"""Journeys across the three services, as a customer's integration lives them: a quote from its
creation to a draft on the billing platform with the webhooks that tell of it; a key revoked in
the api and refused by every service; an uninstall on the platform seen through the API."""

from __future__ import annotations

import time

import pytest
import requests

from contract_client import INVALID_KEY
from contract_webhooks import verify, wait_for

WITHIN_SECONDS = 5.0


@pytest.fixture(scope="module")
def org(make_org):
    return make_org("Journeys Co")


@pytest.fixture(autouse=True)
def _own_endpoints_only(webhook_api):
    yield
    webhook_api.revoke_registered()


def test_a_quote_approved_pushed_to_billing_with_its_webhooks(webhooks, billing, org):
    endpoint = webhooks.register(org, eventTypes=["quote.approved", "billing.quote_pushed"])
    billing.connect(org)

    quote = billing.simple_quote(org)  # created by the org's user and submitted: no rule, approved
    [approved] = [verify(endpoint.secret, r) for r in webhooks.wait_received(endpoint.path, 1)]
    assert (approved["type"], approved["data"]["id"], approved["data"]["status"]) == (
        "quote.approved", quote["id"], "APPROVED")

    pushed = billing.pushed(org.admin, quote["id"])
    assert pushed["status"] == "succeeded", pushed
    received = [verify(endpoint.secret, r) for r in webhooks.wait_received(endpoint.path, 2)]
    [event] = [e for e in received if e["type"] == "billing.quote_pushed"]
    assert (event["data"]["quoteId"], event["data"]["billingQuoteId"]) == (quote["id"], pushed["billingQuoteId"])
    review = requests.get(pushed["reviewUrl"], timeout=10, verify=billing.ca_file)
    assert review.status_code == 200 and pushed["billingQuoteId"] in review.text


def test_a_key_revoked_in_the_api_is_refused_by_every_service(webhooks, billing, fresh_member, admin, api):
    member = fresh_member("admin")
    calls = {
        "api": lambda: api.get("/whoami", member),
        "dispatcher": lambda: webhooks.hooks.get("/webhook-configs", member),
        "connector": lambda: billing.connector.get("/billing-connection", member),
    }
    for name, call in calls.items():
        assert call().status_code in (200, 404), name  # accepted (the connector: 404 when not connected)
    admin.revoke_key(member.key_row_id)
    revoked = time.monotonic()
    for name, call in calls.items():
        refused = wait_for(lambda: (r := call()).status_code == 401 and r, f"{name} refusing the revoked key",
                           timeout=WITHIN_SECONDS - (time.monotonic() - revoked))
        assert refused.json()["detail"] == INVALID_KEY, name


def test_an_uninstall_on_the_platform_shows_as_removed_within_seconds(billing, org):
    account = billing.connect(org)["accountId"]
    billing.stand_in.uninstall(account)
    uninstalled = time.monotonic()
    wait_for(lambda: billing.connector.get("/billing-connection", org.admin).status_code == 404,
             "the connection removed", timeout=WITHIN_SECONDS)
    assert time.monotonic() - uninstalled < WITHIN_SECONDS
