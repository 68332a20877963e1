"""Section 3's states, for the billing push (spec section 4 makes the push a job; its states are
ours, published in the OpenAPI document): queued -> running -> succeeded or failed, the progress
counts growing as the worker creates objects, a finished push final, and one push at a time per
quote (a request while one is queued or running answers that one; after it ends a new one starts)."""

from __future__ import annotations

import pytest

import contract_data as data
from contract_webhooks import wait_for

STATES = {"queued", "running", "succeeded", "failed"}


@pytest.fixture(scope="module")
def org(make_org, billing):
    org = make_org("Billing States Co")
    billing.connect(org)
    return org


def test_the_documented_states_are_the_push_states(billing):
    schema = billing.connector.document["components"]["schemas"]["BillingPush"]["properties"]["status"]
    assert set(schema["enum"]) == STATES


def test_queued_then_running_with_growing_progress_then_succeeded(billing, org):
    products = [billing.product(org) for _ in range(3)]
    quote = billing.approved_quote(org, org.user, [data.line(p["id"]) for p in products])
    slow = billing.stand_in.faults.latency(0.4, path_prefix="/v1/prices")  # products fast, prices slow
    try:
        resp = billing.push(org.admin, quote["id"])
        assert resp.status_code == 202
        record = resp.json()
        assert record["status"] in ("queued", "running")
        assert record["progress"] == {"linesTotal": 0, "productsCreated": 0, "pricesCreated": 0,
                                      "quoteCreated": False} or record["status"] == "running"

        def midway():
            seen = billing.read_push(org.user, quote["id"], record["id"])
            return seen if seen["status"] == "running" and seen["progress"]["productsCreated"] >= 1 else None

        running = wait_for(midway, "the push running with a product created", 60)
        assert running["progress"]["linesTotal"] == 3
        assert running["progress"]["pricesCreated"] < 3 and running["progress"]["quoteCreated"] is False
        assert running["finishedAt"] is None and running["billingQuoteId"] is None
    finally:
        billing.stand_in.faults.remove(slow)
    done = billing.wait_push(org.user, quote["id"], record["id"])
    assert done["status"] == "succeeded"
    assert done["progress"] == {"linesTotal": 3, "productsCreated": 3, "pricesCreated": 3, "quoteCreated": True}
    assert done["finishedAt"] >= done["createdAt"]


def test_a_failed_push_is_final_and_the_quote_can_be_pushed_again(billing, org):
    hourly = billing.product(org, priceModel="HOURLY", listPrices={"USD": "10.00"})
    scalar = billing.product(org)
    quote = billing.approved_quote(org, org.user, [data.line(hourly["id"])])
    failed = billing.pushed(org.admin, quote["id"])
    assert failed["status"] == "failed" and failed["error"]["code"] and failed["finishedAt"]
    assert billing.read_push(org.user, quote["id"], failed["id"]) == failed  # nothing changes it any more

    # the quote edited (back to DRAFT), approved again, pushed anew: a new push
    billing.api.ok("POST", f"/pricing-quotes/{quote['id']}/lines", org.user, json=data.line(scalar["id"]),
                   status=(200, 201))
    billing.api.ok("POST", f"/pricing-quotes/{quote['id']}/approval", org.user, status=201)
    again = billing.pushed(org.admin, quote["id"])
    assert again["id"] != failed["id"] and again["status"] == "succeeded"
    listed = billing.connector.walk(billing.pushes_path(quote["id"]), org.user, "billingPushes")
    assert [(p["id"], p["status"]) for p in listed] == [(again["id"], "succeeded"), (failed["id"], "failed")]
