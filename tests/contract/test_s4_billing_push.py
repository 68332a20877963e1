"""Spec section 4, "Billing push": from an approved quote, one product per supported line, one price
per product and one draft billing quote whose line items are those prices, with exactly the fields
of the spec's three tables (asserted on the bodies the platform stand-in received). Push rules:
scalar prices and one-time fixed fees are supported; tiered, ramped and hourly lines are skipped
with a warning; with no supported line left, no billing quote is created. The catalog version
pinned to the quote is used.

A push is a job: 202 with the record, the worker makes the calls, the record shows the outcome."""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, time, timedelta

import pytest

import contract_data as data

ONE_DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def org(make_org, billing):
    org = make_org("Billing Push Co")
    billing.connect(org)
    return org


@pytest.fixture(scope="module")
def account(billing, org) -> str:
    return billing.connection(org)["accountId"]


def _unix_start(day: date) -> int:
    return calendar.timegm(datetime.combine(day, time(0), tzinfo=UTC).timetuple())


def _unix_end(day: date) -> int:
    return _unix_start(day) + 86400 - 1


def _since(billing, account: str, marks: dict[str, int]) -> dict[str, list]:
    """The account's creates on each path since ``marks`` (counts taken before the push)."""
    return {path: billing.creates(path, account)[count:] for path, count in marks.items()}


def _marks(billing, account: str) -> dict[str, int]:
    return {path: len(billing.creates(path, account)) for path in ("/v1/products", "/v1/prices", "/v1/quotes")}


def test_a_push_creates_exactly_the_spec_fields(billing, org, account):
    seats = billing.product(org, name=data.unique("Seats"), priceModel="PER_UNIT", priceFrequency="MONTHLY",
                            listPrices={"USD": "100.00"})
    platform = billing.product(org, name=data.unique("Platform full name"), shortName="Platform",
                               priceModel="FLAT", priceFrequency="ANNUAL", listPrices={"USD": "1200.00"})
    onboarding = billing.product(org, name=data.unique("Onboarding"), priceModel="ONE_TIME_FEE", priceFrequency="ONE_TIME",
                                 listPrices={"USD": "500.00"})
    consulting = billing.product(org, name=data.unique("Consulting"), priceModel="HOURLY",
                                 listPrices={"USD": "150.00"})
    crm_id = data.unique("CRM")
    opportunity = data.opportunity(billing.api, org.admin, crmId=crm_id)
    start = datetime.now(UTC).date() + timedelta(days=30)
    end = start + timedelta(days=60)
    quote = billing.approved_quote(org, org.user, [
        data.line(seats["id"], quantity="2.5", discountPercent="10", customName="Seats for Initech"),
        data.line(platform["id"], quantity="0.4"),
        data.line(onboarding["id"]),
        data.line(consulting["id"], quantity="10"),
    ], currency="USD", billingFrequency="QUARTERLY", subscriptionTermMonths=12, opportunityId=opportunity["id"],
        startDate=start.isoformat(), endDate=end.isoformat())
    line = {item["productId"]: item for item in quote["lines"]}
    marks = _marks(billing, account)

    push = billing.pushed(org.admin, quote["id"])

    assert push["status"] == "succeeded", push
    created = _since(billing, account, marks)
    products, prices, [billing_quote] = created["/v1/products"], created["/v1/prices"], created["/v1/quotes"]
    expected_products = [
        (seats, "Seats for Initech", "MONTHLY"),  # the line's custom name first
        (platform, "Platform", "ANNUAL"),  # then the product's short name
        (onboarding, onboarding["name"], "ONE_TIME"),  # then its name
    ]
    # the worker pushes the lines side by side (LINES_IN_FLIGHT): the platform sees them in any order
    product_of_line = {p.form["metadata"]["service_product_input_id"]: p for p in products}
    assert len(products) == len(product_of_line) == len(expected_products)
    in_line_order = [product_of_line[line[product["id"]]["id"]] for product, _, _ in expected_products]
    assert [p.form for p in in_line_order] == [
        {"name": name, "metadata": {
            "service_product_input_id": line[product["id"]]["id"],
            "service_product_spec_id": product["specId"],
            "service_quote_price_frequency": frequency,
        }}
        for product, name, frequency in expected_products
    ]
    product_ids = [p.response["id"] for p in in_line_order]
    price_of_product = {p.form["product"]: p for p in prices}
    assert len(prices) == len(price_of_product) == len(product_ids)
    prices = [price_of_product[product_id] for product_id in product_ids]
    quarterly = {"interval": "month", "interval_count": "3"}
    assert [p.form for p in prices] == [
        # 100.00 a month, 10 % off, for a quarter: 270.00 in cents
        {"currency": "usd", "product": product_ids[0], "unit_amount": "27000", "recurring": quarterly},
        # 1200.00 a year, for a quarter
        {"currency": "usd", "product": product_ids[1], "unit_amount": "30000", "recurring": quarterly},
        # a one-time fixed fee: no recurring
        {"currency": "usd", "product": product_ids[2], "unit_amount": "50000"},
    ]
    price_ids = [p.response["id"] for p in prices]
    assert billing_quote.form == {
        "description": quote["name"],
        "line_items": [
            {"price": price_ids[0], "quantity": "3"},  # 2.5 rounded half up
            {"price": price_ids[1], "quantity": "1"},  # 0.4: at least 1
            {"price": price_ids[2], "quantity": "1"},
        ],
        "expires_at": str(_unix_end(end)),
        "subscription_data": {
            "effective_date": str(_unix_start(start)),
            "metadata": {"service_subscription_terms_months": "12"},
        },
        "metadata": {
            "service_pricing_quote_id": quote["id"],
            "service_opportunity_crm_id": crm_id,
            "service_subscription_terms_months": "12",
            "service_billing_frequency": "QUARTERLY",
            "service_billing_period_months": "3",
            "service_target_currency": "USD",
            "service_start_date": start.isoformat(),
        },
    }

    quote_id = billing_quote.response["id"]
    assert billing_quote.response["status"] == "draft"
    assert push["billingQuoteId"] == quote_id
    assert push["reviewUrl"] == f"{billing.stand_in.dashboard_url}/test/quotes/{quote_id}"
    assert push["products"] == [
        {"lineId": line[product["id"]]["id"], "productId": product_id, "priceId": price_id}
        for (product, _, _), product_id, price_id in zip(expected_products, product_ids, price_ids)
    ]
    assert push["progress"] == {"linesTotal": 3, "productsCreated": 3, "pricesCreated": 3, "quoteCreated": True}
    assert push["error"] is None and push["finishedAt"] is not None
    skipped = [w for w in push["warnings"] if w["code"] == "line_skipped"]
    assert [w["lineId"] for w in skipped] == [line[consulting["id"]]["id"]]  # one warning per skipped line
    rounded = {w["lineId"] for w in push["warnings"] if w["code"] == "quantity_rounded"}
    assert rounded == {line[seats["id"]]["id"], line[platform["id"]]["id"]}


@pytest.mark.parametrize("currency, list_price, unit_amount", [
    ("JPY", "1500", "1500"),  # zero-decimal: as is
    ("KWD", "12.340", "12340"),  # three decimals
    ("EUR", "19.99", "1999"),
])
def test_unit_amounts_are_in_the_currencys_minor_units(billing, org, account, currency, list_price, unit_amount):
    product = billing.product(org, listPrices={currency: list_price})
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])], currency=currency,
                                   billingFrequency="MONTHLY")
    marks = _marks(billing, account)
    assert billing.pushed(org.admin, quote["id"])["status"] == "succeeded"
    [price] = _since(billing, account, marks)["/v1/prices"]
    assert (price.form["currency"], price.form["unit_amount"]) == (currency.lower(), unit_amount)


@pytest.mark.parametrize("frequency, recurring", [
    ("MONTHLY", {"interval": "month", "interval_count": "1"}),
    ("SEMI_ANNUAL", {"interval": "month", "interval_count": "6"}),
    ("ANNUAL", {"interval": "year", "interval_count": "1"}),
])
def test_recurring_follows_the_quote_billing_frequency(billing, org, account, frequency, recurring):
    product = billing.product(org, priceFrequency="MONTHLY", listPrices={"USD": "10.00"})
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])], billingFrequency=frequency)
    marks = _marks(billing, account)
    assert billing.pushed(org.admin, quote["id"])["status"] == "succeeded"
    [price] = _since(billing, account, marks)["/v1/prices"]
    months = {"MONTHLY": 1, "SEMI_ANNUAL": 6, "ANNUAL": 12}[frequency]
    assert price.form["recurring"] == recurring
    assert price.form["unit_amount"] == str(1000 * months)
    [quote_call] = _since(billing, account, marks)["/v1/quotes"]
    assert quote_call.form["metadata"]["service_billing_period_months"] == str(months)


def test_a_past_start_date_sets_no_effective_date_and_no_end_date_falls_back_to_a_future_expiry(billing, org,
                                                                                                  account):
    product = billing.product(org)
    start = datetime.now(UTC).date() - timedelta(days=10)
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])], startDate=start.isoformat())
    marks = _marks(billing, account)
    before = datetime.now(UTC)
    assert billing.pushed(org.admin, quote["id"])["status"] == "succeeded"
    [quote_call] = _since(billing, account, marks)["/v1/quotes"]
    assert quote_call.form["subscription_data"] == {"metadata": {"service_subscription_terms_months": "12"}}
    assert quote_call.form["metadata"]["service_start_date"] == start.isoformat()
    expires_at = datetime.fromtimestamp(int(quote_call.form["expires_at"]), UTC)
    assert before + timedelta(days=29) < expires_at <= datetime.now(UTC) + timedelta(days=30)  # a term-based fallback


def test_a_quote_without_a_start_date_or_opportunity_sends_neither(billing, org, account):
    product = billing.product(org)
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])])
    marks = _marks(billing, account)
    assert billing.pushed(org.admin, quote["id"])["status"] == "succeeded"
    [quote_call] = _since(billing, account, marks)["/v1/quotes"]
    assert "effective_date" not in quote_call.form["subscription_data"]
    assert {"service_start_date", "service_opportunity_crm_id"}.isdisjoint(quote_call.form["metadata"])


def test_with_no_supported_line_no_billing_quote_is_created(billing, org, account):
    hourly = billing.product(org, priceModel="HOURLY", listPrices={"USD": "150.00"})
    ramped_or_hourly = billing.product(org, priceModel="HOURLY", listPrices={"USD": "90.00"})
    quote = billing.approved_quote(org, org.user, [data.line(hourly["id"]), data.line(ramped_or_hourly["id"])])
    marks = _marks(billing, account)
    push = billing.pushed(org.admin, quote["id"])
    assert push["status"] == "failed"
    assert push["error"]["code"] == "no_supported_lines"
    assert "no billing quote is created" in push["error"]["message"]
    assert [w["code"] for w in push["warnings"]] == ["line_skipped", "line_skipped"]
    assert (push["billingQuoteId"], push["products"]) == (None, [])
    assert _since(billing, account, marks) == {"/v1/products": [], "/v1/prices": [], "/v1/quotes": []}


def test_every_create_carries_its_own_idempotency_key(billing, org, account):
    quote = billing.simple_quote(org)
    marks = _marks(billing, account)
    push = billing.pushed(org.admin, quote["id"])
    calls = [call for calls in _since(billing, account, marks).values() for call in calls]
    keys = [call.idempotency_key for call in calls]
    assert len(calls) == 3 and all(keys) and len(set(keys)) == 3
    assert all(push["id"] in key for key in keys)  # derived from the push (and the line and object)


def test_the_catalog_version_pinned_to_the_quote_is_pushed(billing, org, account):
    product = billing.product(org, name=data.unique("Pinned name"), listPrices={"USD": "40.00"})
    quote = billing.approved_quote(org, org.user, [data.line(product["id"])])
    billing.api.ok("PATCH", f"/products/{product['id']}", org.admin,
                   json={"name": "Renamed later", "listPrices": {"USD": "99.00"}})
    marks = _marks(billing, account)
    assert billing.pushed(org.admin, quote["id"])["status"] == "succeeded"
    created = _since(billing, account, marks)
    assert created["/v1/products"][0].form["name"] == product["name"]
    assert created["/v1/prices"][0].form["unit_amount"] == "4000"


def test_the_push_is_accepted_at_once_and_finished_by_the_worker(billing, org):
    quote = billing.simple_quote(org)
    resp = billing.push(org.admin, quote["id"])
    assert resp.status_code == 202
    record = resp.json()
    assert resp.headers["Location"].endswith(f"/pricing-quotes/{quote['id']}/billing-pushes/{record['id']}")
    assert record["quoteId"] == quote["id"] and record["requestedBy"] == org.admin.user_id
    assert record["status"] in ("queued", "running")
    assert (record["billingQuoteId"], record["reviewUrl"], record["finishedAt"]) == (None, None, None)
    done = billing.wait_push(org.user, quote["id"], record["id"])
    assert done["status"] == "succeeded" and done["createdAt"] == record["createdAt"]


def test_a_second_request_while_a_push_runs_answers_the_running_push(billing, org, account):
    quote = billing.simple_quote(org)
    slow = billing.stand_in.faults.latency(0.5, path_prefix="/v1/")  # a push of three calls takes 1.5 s at least
    try:
        first = billing.push(org.admin, quote["id"])
        again = billing.push(org.admin, quote["id"])
        assert (first.status_code, again.status_code) == (202, 200)
        assert again.json()["id"] == first.json()["id"]
        billing.wait_push(org.user, quote["id"], first.json()["id"])
    finally:
        billing.stand_in.faults.remove(slow)
    later = billing.push(org.admin, quote["id"])  # once finished, a new push may start
    assert later.status_code == 202 and later.json()["id"] != first.json()["id"]
    billing.wait_push(org.user, quote["id"], later.json()["id"])
