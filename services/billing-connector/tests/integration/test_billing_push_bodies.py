"""Pushes end to end against the stand-in, asserting the exact form bodies it received (spec section
4's three field tables): currencies with their minor units, every billing frequency, one-time fees,
quantities, start dates, skipped lines, nothing supported, and a limit found before anything is made."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from dps_billing.domain.expiry import end_of_day
from dps_billing.domain.quote_snapshot import BillingFrequency, PriceFrequency, PriceModel

from billing_helpers import connect, line, outbox_events, quote
from push_helpers import request_push, wait_for, worker_thread


@pytest.fixture(scope="module")
def worker(settings, served):
    with worker_thread(settings):
        yield


@pytest.fixture
def org(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    return org


def run(served, fake_api, org, snapshot):
    fake_api.put_quote(snapshot)
    push = request_push(served, org.admin.key, snapshot)
    return wait_for(served, org.user.key, snapshot.id, push["id"])


def sent(stand_in, push_id: str, path: str) -> list:
    return [r for r in stand_in.requests(path=path, method="POST") if (r.idempotency_key or "").startswith(push_id)]


def sent_for_push(stand_in, push_id: str) -> list:
    """Every call of the push: products, prices and quotes."""
    return [r for r in stand_in.requests(path_prefix="/v1/") if (r.idempotency_key or "").startswith(push_id)]


def test_a_usd_quote_is_pushed_exactly_as_the_spec_writes_it(worker, served, fake_api, stand_in, org, committed_tx):
    first = line(1, custom_name="Platform seats", short_name="Seats", name="Platform", spec_id="PLAT",
                 unit_amount="99.50", quantity="3")
    second = line(2, name="Support", spec_id="SUP", unit_amount="20", quantity="2.5")
    start = date.today() + timedelta(days=10)
    end = date.today() + timedelta(days=40)
    snapshot = quote(org.id, org.user.user_id, [first, second], start=start, end=end, term=12)
    push = run(served, fake_api, org, snapshot)
    assert push["status"] == "succeeded", push
    pid = push["id"]
    products = sent(stand_in, pid, "/v1/products")
    assert [p.idempotency_key for p in products] == [f"{pid}:{first.id}:product", f"{pid}:{second.id}:product"]
    assert products[0].form == {"name": "Platform seats", "metadata": {
        "service_product_input_id": str(first.id), "service_product_spec_id": "PLAT",
        "service_quote_price_frequency": "MONTHLY"}}
    assert products[1].form["name"] == "Support"
    prices = sent(stand_in, pid, "/v1/prices")
    product_ids = [p.response["id"] for p in products]
    assert [p.form for p in prices] == [
        {"currency": "usd", "product": product_ids[0], "unit_amount": "9950",
         "recurring": {"interval": "month", "interval_count": "1"}},
        {"currency": "usd", "product": product_ids[1], "unit_amount": "2000",
         "recurring": {"interval": "month", "interval_count": "1"}},
    ]
    quotes = sent(stand_in, pid, "/v1/quotes")
    assert len(quotes) == 1 and quotes[0].idempotency_key == f"{pid}:quote:quote"
    price_ids = [p.response["id"] for p in prices]
    assert quotes[0].form == {
        "description": "Acme renewal",
        "line_items": [{"price": price_ids[0], "quantity": "3"}, {"price": price_ids[1], "quantity": "3"}],
        "expires_at": str(int(end_of_day(end).timestamp())),
        "metadata": {
            "service_pricing_quote_id": str(snapshot.id),
            "service_opportunity_crm_id": "CRM-42",
            "service_subscription_terms_months": "12",
            "service_billing_frequency": "MONTHLY",
            "service_billing_period_months": "1",
            "service_target_currency": "USD",
            "service_start_date": start.isoformat(),
        },
        "subscription_data": {
            "effective_date": str(int(datetime.combine(start, datetime.min.time(), UTC).timestamp())),
            "metadata": {"service_subscription_terms_months": "12"},
        },
    }
    billing_quote = quotes[0].response["id"]
    assert push["billingQuoteId"] == billing_quote
    assert push["reviewUrl"] == f"{stand_in.dashboard_url}/test/quotes/{billing_quote}"
    assert push["progress"] == {"linesTotal": 2, "productsCreated": 2, "pricesCreated": 2, "quoteCreated": True}
    assert push["products"] == [
        {"lineId": str(first.id), "productId": product_ids[0], "priceId": price_ids[0]},
        {"lineId": str(second.id), "productId": product_ids[1], "priceId": price_ids[1]},
    ]
    assert [w["code"] for w in push["warnings"]] == ["quantity_rounded"]
    with committed_tx.read() as session:
        pushed = outbox_events(session, org.id, "billing.quote_pushed")
    assert [e["data"]["billingQuoteId"] for e in pushed] == [billing_quote]


@pytest.mark.parametrize(("currency", "amount", "minor", "rounded"), [
    ("JPY", "5000", "5000", False),
    ("KWD", "1.235", "1240", True),
    ("KWD", "12.5", "12500", False),
    ("ISK", "5", "500", False),
    ("ISK", "5.5", "600", True),
    ("USD", "10.005", "1001", True),
])
def test_amounts_are_sent_in_the_platform_s_minor_units(worker, served, fake_api, stand_in, org,
                                                         currency, amount, minor, rounded):
    snapshot = quote(org.id, org.user.user_id, [line(unit_amount=amount)], currency=currency)
    push = run(served, fake_api, org, snapshot)
    assert push["status"] == "succeeded", push
    price = sent(stand_in, push["id"], "/v1/prices")[0].form
    assert (price["currency"], price["unit_amount"]) == (currency.lower(), minor)
    quote_form = sent(stand_in, push["id"], "/v1/quotes")[0].form
    assert quote_form["metadata"]["service_target_currency"] == currency
    assert ("amount_rounded" in [w["code"] for w in push["warnings"]]) is rounded


@pytest.mark.parametrize(("frequency", "interval", "count", "months"), [
    (BillingFrequency.MONTHLY, "month", "1", "1"),
    (BillingFrequency.QUARTERLY, "month", "3", "3"),
    (BillingFrequency.SEMI_ANNUAL, "month", "6", "6"),
    (BillingFrequency.ANNUAL, "year", "1", "12"),
])
def test_every_billing_frequency_with_a_one_time_fee_beside_it(worker, served, fake_api, stand_in, org,
                                                               frequency, interval, count, months):
    recurring = line(1, unit_amount="300")
    fee = line(2, model=PriceModel.ONE_TIME_FEE, frequency=PriceFrequency.ONE_TIME, unit_amount="1500",
               quantity="0.4", name="Setup")
    snapshot = quote(org.id, org.user.user_id, [recurring, fee], frequency=frequency,
                     start=date.today() - timedelta(days=3))
    push = run(served, fake_api, org, snapshot)
    assert push["status"] == "succeeded", push
    # the two lines' calls run side by side: their prices are told apart by amount, not by order
    prices = {p.form["unit_amount"]: p.form for p in sent(stand_in, push["id"], "/v1/prices")}
    assert set(prices) == {"30000", "150000"}
    assert prices["30000"]["recurring"] == {"interval": interval, "interval_count": count}
    assert "recurring" not in prices["150000"]
    quote_form = sent(stand_in, push["id"], "/v1/quotes")[0].form
    assert quote_form["metadata"]["service_billing_frequency"] == frequency.value
    assert quote_form["metadata"]["service_billing_period_months"] == months
    assert [item["quantity"] for item in quote_form["line_items"]] == ["1", "1"]  # 0.4 goes up to 1
    assert "effective_date" not in quote_form["subscription_data"]  # the start date has passed
    assert int(quote_form["expires_at"]) > datetime.now(UTC).timestamp()


def test_unsupported_lines_are_skipped_with_a_warning_each(worker, served, fake_api, stand_in, org):
    kept = line(1)
    tiered = line(2, model=PriceModel.TIERED, name="Tiered")
    hourly = line(3, model=PriceModel.HOURLY, name="Hours")
    push = run(served, fake_api, org, quote(org.id, org.user.user_id, [kept, tiered, hourly]))
    assert push["status"] == "succeeded", push
    assert [p.form["metadata"]["service_product_input_id"] for p in sent(stand_in, push["id"], "/v1/products")] \
        == [str(kept.id)]
    skipped = [w for w in push["warnings"] if w["code"] == "line_skipped"]
    assert [w["lineId"] for w in skipped] == [str(tiered.id), str(hourly.id)]
    assert push["progress"]["linesTotal"] == 1


def test_nothing_supported_creates_nothing_and_says_why(worker, served, fake_api, stand_in, org, committed_tx):
    snapshot = quote(org.id, org.user.user_id, [line(model=PriceModel.RAMPED)])
    push = run(served, fake_api, org, snapshot)
    assert push["status"] == "failed"
    assert push["error"]["code"] == "no_supported_lines"
    assert "no billing quote is created" in push["error"]["message"]
    assert sent_for_push(stand_in, push["id"]) == []
    with committed_tx.read() as session:
        failed = outbox_events(session, org.id, "billing.push_failed")
    assert [e["data"]["error"]["code"] for e in failed] == ["no_supported_lines"]


def test_a_quote_breaking_a_platform_limit_creates_nothing(worker, served, fake_api, stand_in, org):
    snapshot = quote(org.id, org.user.user_id, [line(position) for position in range(1, 22)])
    push = run(served, fake_api, org, snapshot)
    assert push["status"] == "failed"
    assert push["error"]["code"] == "limit_exceeded" and push["error"]["param"] == "quote.line_items"
    assert sent_for_push(stand_in, push["id"]) == []
    assert push["progress"]["productsCreated"] == 0
