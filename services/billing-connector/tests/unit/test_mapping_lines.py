"""The mapping's products and prices: names, metadata, amounts per currency, intervals, one-time
fees, skipped lines."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

import pytest

from dps_billing.domain.mapping import plan_push
from dps_billing.domain.notices import NoticeCode
from dps_billing.domain.plan import PriceParams, ProductParams, Recurring
from dps_billing.domain.quote_snapshot import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteSnapshotLine,
)

LineFactory = Callable[..., QuoteSnapshotLine]
QuoteFactory = Callable[..., QuoteSnapshot]


def test_a_usd_quote(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    first = make_line(custom_name="Analytics for Acme", unit_amount=Decimal("1250.50"), quantity=Decimal("3"))
    second = make_line(product_spec_id="SPEC-2", price_frequency=PriceFrequency.ANNUAL, unit_amount=Decimal("40"))
    plan = plan_push(make_quote(lines=(first, second)), now)

    assert not plan.blocked and plan.errors == () and plan.warnings == ()
    assert [line.line_id for line in plan.lines] == [str(first.id), str(second.id)]
    assert plan.lines[0].product == ProductParams(name="Analytics for Acme", metadata={
        "service_product_input_id": str(first.id),
        "service_product_spec_id": "SPEC-1",
        "service_quote_price_frequency": "MONTHLY",
    })
    assert plan.lines[0].price == PriceParams(currency="usd", unit_amount=125050, recurring=Recurring("month", 1))
    assert plan.lines[1].product.metadata["service_quote_price_frequency"] == "ANNUAL"
    assert plan.lines[1].product.metadata["service_product_spec_id"] == "SPEC-2"
    # the line's unit amount is already per billing period of the quote: the product's own
    # frequency does not change the interval
    assert plan.lines[1].price == PriceParams(currency="usd", unit_amount=4000, recurring=Recurring("month", 1))
    assert plan.quote is not None
    assert [(item.line_id, item.quantity) for item in plan.quote.line_items] == [(str(first.id), 3),
                                                                                 (str(second.id), 1)]


def test_lines_in_position_order(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    late, early = make_line(position=7), make_line(position=2)
    plan = plan_push(make_quote(lines=(late, early)), now)
    assert [line.line_id for line in plan.lines] == [str(early.id), str(late.id)]
    assert plan.quote is not None
    assert [item.line_id for item in plan.quote.line_items] == [str(early.id), str(late.id)]


@pytest.mark.parametrize(("names", "expected"), [
    (("Custom", "Short", "Name", "SPEC"), "Custom"),
    ((None, "Short", "Name", "SPEC"), "Short"),
    ((None, None, "Name", "SPEC"), "Name"),
    (("  ", "", "Name", "SPEC"), "Name"),
    ((None, None, " ", "SPEC"), "SPEC"),
])
def test_the_product_name_is_the_first_available(make_quote: QuoteFactory, make_line: LineFactory, now: datetime,
                                                 names: tuple[str | None, str | None, str, str], expected: str) -> None:
    custom, short, name, spec = names
    line = make_line(custom_name=custom, product_short_name=short, product_name=name, product_spec_id=spec)
    assert plan_push(make_quote(lines=(line,)), now).lines[0].product.name == expected


def test_a_line_without_any_name_is_an_error(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    line = make_line(custom_name=None, product_short_name=None, product_name="", product_spec_id=" ")
    plan = plan_push(make_quote(lines=(line,)), now)
    assert plan.blocked and plan.quote is None and plan.lines == ()
    assert [(e.code, e.line_id) for e in plan.errors] == [(NoticeCode.PRODUCT_NAME_MISSING, str(line.id))]


@pytest.mark.parametrize(("frequency", "interval", "months"), [
    (BillingFrequency.MONTHLY, Recurring("month", 1), "1"),
    (BillingFrequency.QUARTERLY, Recurring("month", 3), "3"),
    (BillingFrequency.SEMI_ANNUAL, Recurring("month", 6), "6"),
    (BillingFrequency.ANNUAL, Recurring("year", 1), "12"),
])
def test_every_billing_frequency(make_quote: QuoteFactory, make_line: LineFactory, now: datetime,
                                 frequency: BillingFrequency, interval: Recurring, months: str) -> None:
    lines = (make_line(price_frequency=PriceFrequency.MONTHLY), make_line(price_frequency=PriceFrequency.ANNUAL),
             make_line(price_model=PriceModel.FLAT, price_frequency=PriceFrequency.QUARTERLY))
    plan = plan_push(make_quote(billing_frequency=frequency, lines=lines), now)
    assert [line.price.recurring for line in plan.lines] == [interval] * 3
    assert plan.quote is not None
    assert plan.quote.metadata["service_billing_frequency"] == frequency.value
    assert plan.quote.metadata["service_billing_period_months"] == months


def test_one_time_fees_have_no_recurring(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    fee = make_line(price_model=PriceModel.ONE_TIME_FEE, price_frequency=PriceFrequency.ONE_TIME,
                    unit_amount=Decimal("5000"))
    once = make_line(price_model=PriceModel.FLAT, price_frequency=PriceFrequency.ONE_TIME, unit_amount=Decimal("99.5"))
    fee_with_monthly_frequency = make_line(price_model=PriceModel.ONE_TIME_FEE, price_frequency=PriceFrequency.MONTHLY)
    monthly = make_line()
    plan = plan_push(make_quote(billing_frequency=BillingFrequency.ANNUAL,
                                lines=(fee, once, fee_with_monthly_frequency, monthly)), now)
    assert not plan.blocked
    assert [line.price.recurring for line in plan.lines] == [None, None, None, Recurring("year", 1)]
    assert [line.price.unit_amount for line in plan.lines] == [500000, 9950, 10000, 10000]
    assert plan.lines[0].product.metadata["service_quote_price_frequency"] == "ONE_TIME"


def test_a_quote_of_one_time_fees_only(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    fee = make_line(price_model=PriceModel.ONE_TIME_FEE, price_frequency=PriceFrequency.ONE_TIME)
    plan = plan_push(make_quote(lines=(fee,)), now)
    assert not plan.blocked and plan.lines[0].price.recurring is None and plan.quote is not None


def test_a_line_contradicting_its_recurring_flag_is_an_error(make_quote: QuoteFactory, make_line: LineFactory,
                                                             now: datetime) -> None:
    odd = make_line(price_model=PriceModel.ONE_TIME_FEE, recurring=True)
    plan = plan_push(make_quote(lines=(make_line(), odd)), now)
    assert plan.blocked and [(e.code, e.line_id) for e in plan.errors] == [(NoticeCode.LINE_INCONSISTENT, str(odd.id))]


@pytest.mark.parametrize(("currency", "amount", "sent", "rounded"), [
    ("USD", "1250.50", 125050, False),
    ("USD", "10.005", 1001, True),
    ("JPY", "150000", 150000, False),
    ("JPY", "1500.5", 1501, True),
    ("KWD", "1.25", 1250, False),
    ("KWD", "1.2345", 1230, True),
    ("KWD", "12.345", 12350, True),
    ("ISK", "5", 500, False),
    ("ISK", "1999.5", 200000, True),
    ("UGX", "10000", 1000000, False),
])
def test_amounts_in_the_platforms_minor_units(make_quote: QuoteFactory, make_line: LineFactory, now: datetime,
                                              currency: str, amount: str, sent: int, rounded: bool) -> None:
    line = make_line(unit_amount=Decimal(amount))
    plan = plan_push(make_quote(currency=currency, lines=(line,)), now)
    assert plan.lines[0].price == PriceParams(currency=currency.lower(), unit_amount=sent,
                                              recurring=Recurring("month", 1))
    assert plan.quote is not None and plan.quote.metadata["service_target_currency"] == currency
    warnings = [(w.code, w.line_id) for w in plan.warnings]
    assert warnings == ([(NoticeCode.AMOUNT_ROUNDED, str(line.id))] if rounded else [])


def test_the_rounding_warning_says_what_is_sent(make_quote: QuoteFactory, make_line: LineFactory,
                                                now: datetime) -> None:
    plan = plan_push(make_quote(currency="KWD", lines=(make_line(unit_amount=Decimal("1.2345")),)), now)
    assert "1.2345 KWD" in plan.warnings[0].message and "1.23 KWD (1230)" in plan.warnings[0].message


def test_a_negative_amount_is_an_error(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    line = make_line(unit_amount=Decimal("-5"))
    plan = plan_push(make_quote(lines=(line,)), now)
    assert plan.blocked and [(e.code, e.line_id) for e in plan.errors] == [(NoticeCode.NEGATIVE_AMOUNT, str(line.id))]


def test_a_free_line_is_pushed_at_zero(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    plan = plan_push(make_quote(lines=(make_line(unit_amount=Decimal("0")),)), now)
    assert not plan.blocked and plan.lines[0].price.unit_amount == 0


@pytest.mark.parametrize(("quantity", "sent", "warned"), [
    ("0.4", 1, True),
    ("2.5", 3, True),
    ("3", 3, False),
    ("3.000", 3, False),
    ("0", 1, True),
    ("1.49", 1, True),
])
def test_quantities_are_whole_and_at_least_1(make_quote: QuoteFactory, make_line: LineFactory, now: datetime,
                                             quantity: str, sent: int, warned: bool) -> None:
    line = make_line(quantity=Decimal(quantity))
    plan = plan_push(make_quote(lines=(line,)), now)
    assert plan.quote is not None and plan.quote.line_items[0].quantity == sent
    assert [(w.code, w.line_id) for w in plan.warnings] == ([(NoticeCode.QUANTITY_ROUNDED, str(line.id))]
                                                            if warned else [])


def test_tiered_ramped_and_hourly_lines_are_skipped_with_one_warning_each(
        make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    tiered = make_line(price_model=PriceModel.TIERED)
    kept = make_line()
    ramped = make_line(price_model=PriceModel.RAMPED)
    hourly = make_line(price_model=PriceModel.HOURLY, quantity=Decimal("2.5"))
    fee = make_line(price_model=PriceModel.ONE_TIME_FEE, price_frequency=PriceFrequency.ONE_TIME)
    plan = plan_push(make_quote(lines=(tiered, kept, ramped, hourly, fee)), now)
    assert not plan.blocked
    assert [line.line_id for line in plan.lines] == [str(kept.id), str(fee.id)]
    assert plan.quote is not None and [item.line_id for item in plan.quote.line_items] == [str(kept.id), str(fee.id)]
    assert [(w.code, w.line_id) for w in plan.warnings] == [
        (NoticeCode.LINE_SKIPPED, str(tiered.id)),
        (NoticeCode.LINE_SKIPPED, str(ramped.id)),
        (NoticeCode.LINE_SKIPPED, str(hourly.id)),
    ]
    assert "TIERED" in plan.warnings[0].message and "HOURLY" in plan.warnings[2].message


def test_nothing_supported_means_no_quote(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    lines = (make_line(price_model=PriceModel.TIERED), make_line(price_model=PriceModel.HOURLY))
    plan = plan_push(make_quote(lines=lines), now)
    assert plan.blocked and plan.quote is None and plan.lines == ()
    assert [e.code for e in plan.errors] == [NoticeCode.NO_SUPPORTED_LINES]
    assert [w.code for w in plan.warnings] == [NoticeCode.LINE_SKIPPED] * 2


def test_a_quote_without_lines_has_nothing_to_push(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(lines=()), now)
    assert plan.blocked and [e.code for e in plan.errors] == [NoticeCode.NO_SUPPORTED_LINES]
