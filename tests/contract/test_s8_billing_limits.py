"""Spec section 8 for the billing push, and the platform's own limits (spec section 4 leaves them to
the platform; the connector finds them before anything is created): at most 20 line items on a
draft quote (Stripe's cap, which the subscription it becomes shares), so a quote with 21 supported
lines creates nothing and says why, while 20 go through; the calls of one platform account stay
paced (``BILLING_RATE_PER_SECOND``, default 20) under the platform's own limit (Stripe's test mode:
25 a second), so a push never draws a 429, whatever the quote's size.
Page sizes are in test_s2_billing_paging, the 10 MB body in test_s7_billing_errors."""

from __future__ import annotations

import pytest

import contract_data as data

MAX_LINE_ITEMS = 20
PLATFORM_RATE_PER_SECOND = 25  # Stripe's test mode; the connector paces at its default, 20


@pytest.fixture(scope="module")
def org(make_org, billing):
    org = make_org("Billing Limits Co")
    billing.connect(org)
    return org


@pytest.fixture(scope="module")
def account(billing, org) -> str:
    return billing.connection(org)["accountId"]


@pytest.fixture(scope="module")
def product(billing, org) -> dict:
    return billing.product(org, listPrices={"USD": "12.00"})


def _calls(billing, account: str, push_id: str) -> list:
    return [r for r in billing.stand_in.requests(path_prefix="/v1/", method="POST")
            if r.account == account and (r.idempotency_key or "").startswith(push_id)]


def test_one_line_too_many_creates_nothing_and_says_why(billing, org, account, product):
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])] * (MAX_LINE_ITEMS + 1))
    push = billing.pushed(org.admin, quote["id"])
    assert push["status"] == "failed"
    assert push["error"]["code"] == "limit_exceeded"
    assert str(MAX_LINE_ITEMS) in push["error"]["message"] and str(MAX_LINE_ITEMS + 1) in push["error"]["message"]
    assert push["error"]["param"]
    assert push["products"] == [] and push["billingQuoteId"] is None
    assert _calls(billing, account, push["id"]) == []  # found before any call


def test_the_most_line_items_go_through_without_a_single_429(billing, org, account, product):
    """The platform's limiter on, at Stripe's test-mode rate: the connector's pacing (20 a second,
    evenly spaced, shared by its workers) keeps every call of a 41-call push under it."""
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])] * MAX_LINE_ITEMS)
    limiter = billing.stand_in.faults.rate_limit(PLATFORM_RATE_PER_SECOND)
    try:
        push = billing.pushed(org.admin, quote["id"])
    finally:
        billing.stand_in.faults.remove(limiter)
    assert push["status"] == "succeeded", push
    [created] = [q for q in billing.stand_in.objects("quote", account) if q["id"] == push["billingQuoteId"]]
    assert len(created["line_items"]["data"]) == MAX_LINE_ITEMS

    calls = _calls(billing, account, push["id"])
    assert [call.status for call in calls] == [200] * (2 * MAX_LINE_ITEMS + 1)  # no 429, no retry
    arrivals = sorted(call.at for call in calls)
    busiest = max(sum(1 for t in arrivals if s <= t < s + 1.0) for s in arrivals)
    assert busiest <= PLATFORM_RATE_PER_SECOND  # in any one-second window
