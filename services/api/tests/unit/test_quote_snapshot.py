"""The quote snapshot built from a quote view, by the pricing domain, without I/O."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from decimal import Decimal as D

import pytest

from dps_api.domain.commands import NOT_SENT
from dps_api.domain.pricing import LineTerms, QuoteTotals, billing_period_unit_price, price_line
from dps_api.domain.quote_commands import UpdateQuote
from dps_api.domain.quote_snapshot import snapshot
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus


@pytest.mark.parametrize(
    ("net", "model", "frequency", "billing", "expected"),
    [
        ("90", PriceModel.PER_UNIT, PriceFrequency.MONTHLY, BillingFrequency.QUARTERLY, "270"),
        ("1200.00", PriceModel.PER_UNIT, PriceFrequency.ANNUAL, BillingFrequency.MONTHLY, "100.00"),
        ("300", PriceModel.FLAT, PriceFrequency.QUARTERLY, BillingFrequency.ANNUAL, "1200"),
        ("600", PriceModel.HOURLY, PriceFrequency.SEMI_ANNUAL, BillingFrequency.QUARTERLY, "300"),
        ("450", PriceModel.ONE_TIME_FEE, PriceFrequency.ONE_TIME, BillingFrequency.ANNUAL, "450"),
        ("450", PriceModel.PER_UNIT, PriceFrequency.ONE_TIME, BillingFrequency.MONTHLY, "450"),
    ],
)
def test_billing_period_unit_price(net, model, frequency, billing, expected):
    assert billing_period_unit_price(D(net), model, frequency, billing) == D(expected)


def test_billing_period_unit_price_is_exact_not_rounded():
    monthly = billing_period_unit_price(D("1000"), PriceModel.PER_UNIT, PriceFrequency.ANNUAL, BillingFrequency.MONTHLY)
    assert monthly != D("83.33") and abs(monthly * 12 - 1000) < D("1e-55")


def test_the_line_amount_is_the_unit_amount_times_the_quantity_when_it_is_exact():
    terms = LineTerms(PriceModel.PER_UNIT, PriceFrequency.MONTHLY, D(3), D(100), discount_percent=D(10))
    priced = price_line(terms, BillingFrequency.QUARTERLY, "USD")
    unit = billing_period_unit_price(priced.net_unit_price, terms.price_model, terms.price_frequency, BillingFrequency.QUARTERLY)
    assert priced.amount_per_billing_period == unit * 3 == D("810.00")


def line(**fields) -> QuoteLineView:
    values = dict(
        id=uuid.uuid4(), position=1, product_id=uuid.uuid4(), product_spec_id="SKU-1", product_version=2,
        product_name="Seats", product_short_name=None, custom_name=None, price_model=PriceModel.PER_UNIT,
        price_frequency=PriceFrequency.ANNUAL, locked=False, quantity=D(3), list_unit_price=D("1000"),
        discount_percent=D("0.0000"), net_unit_price=D("1000"), amount_per_billing_period=D("250.00"),
        one_time_amount=None,
    )
    return QuoteLineView(**{**values, **fields})


def view(*lines: QuoteLineView, currency="USD", **fields) -> QuoteView:
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    values = dict(
        id=uuid.uuid4(), organization_id=uuid.uuid4(), name="Q", opportunity_id=uuid.uuid4(), owner_user_id=uuid.uuid4(),
        status=QuoteStatus.APPROVED, currency=currency, billing_frequency=BillingFrequency.MONTHLY,
        subscription_term_months=12, start_date=date(2027, 1, 1), end_date=None, pricebook_id=None,
        pricebook_version=None,
        totals=QuoteTotals(D("250.00"), D("0.00"), D("3000.00"), D("3000.00"), D("0.0000"), False),
        line_count=len(lines), created_at=moment, updated_at=moment, lines=lines,
    )
    return QuoteView(**{**values, **fields})


def test_snapshot_lines_carry_the_unit_amount_per_billing_period_and_the_amount():
    quote = view(line(), line(position=2, price_model=PriceModel.ONE_TIME_FEE, price_frequency=PriceFrequency.ONE_TIME,
                             net_unit_price=D("450"), amount_per_billing_period=None, one_time_amount=D("900.00"), quantity=D(2)))
    snap = snapshot(quote, "CRM-1")
    recurring, once = snap.lines
    assert recurring.recurring and recurring.amount == D("250.00")
    assert str(recurring.unit_amount).startswith("83.3333") and recurring.unit_amount * 12 - 1000 < D("1e-50")
    assert (once.recurring, once.unit_amount, once.amount) == (False, D("450.00"), D("900.00"))
    assert str(once.unit_amount) == "450.00"  # at least the currency's minor units, as the API writes prices
    assert (snap.opportunity_crm_id, snap.quote.status, snap.quote.billing_frequency) == ("CRM-1", QuoteStatus.APPROVED, "MONTHLY")


def test_amounts_follow_the_currency_minor_units():
    quote = view(line(net_unit_price=D("12000"), amount_per_billing_period=D("3000")), currency="JPY")
    [only] = snapshot(quote, None).lines
    assert (str(only.unit_amount), str(only.amount)) == ("1000", "3000")


def test_a_list_item_without_lines_has_no_snapshot():
    with pytest.raises(ValueError):
        snapshot(view(lines=None), None)


def test_update_commands_tell_not_sent_from_null():
    edit = UpdateQuote(opportunity_id=None, name="New")
    assert edit.sent() == {"opportunity_id": None, "name": "New"}
    assert edit.pricebook_id is NOT_SENT and UpdateQuote().sent() == {}
