"""The pricing domain: frequencies, tiers, one-time fees, discounts vs net prices, totals."""

from decimal import Decimal as D

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dps_api.domain.pricing import (
    LineTerms,
    PricingError,
    Tier,
    carried_net_price,
    contract_value,
    price_line,
    quote_totals,
    tier_unit_price,
)


def terms(price="100", model="PER_UNIT", frequency="MONTHLY", quantity="1", **kw) -> LineTerms:
    return LineTerms(model, frequency, D(quantity), D(price), **kw)


@pytest.mark.parametrize(
    ("price_frequency", "billing", "expected"),
    [
        ("MONTHLY", "MONTHLY", "100.00"),
        ("MONTHLY", "QUARTERLY", "300.00"),
        ("MONTHLY", "SEMI_ANNUAL", "600.00"),
        ("MONTHLY", "ANNUAL", "1200.00"),
        ("ANNUAL", "MONTHLY", "8.33"),
        ("ANNUAL", "QUARTERLY", "25.00"),
        ("QUARTERLY", "ANNUAL", "400.00"),
        ("SEMI_ANNUAL", "QUARTERLY", "50.00"),
    ],
)
def test_unit_prices_are_normalised_to_the_billing_period(price_frequency, billing, expected):
    line = price_line(terms("100", frequency=price_frequency), billing, "USD")
    assert str(line.amount_per_billing_period) == expected
    assert line.recurring and line.one_time_amount is None


def test_amount_is_net_times_quantity_times_ratio_rounded_once():
    # 3 x 33.335 = 100.005 per month -> 100.01 (rounding each unit first would give 100.02)
    line = price_line(terms("33.335", quantity="3"), "MONTHLY", "USD")
    assert line.amount_per_billing_period == D("100.01")


@pytest.mark.parametrize(("currency", "expected"), [("JPY", "8334"), ("USD", "8333.83"), ("KWD", "8333.833")])
def test_line_amounts_round_to_the_currencys_minor_units(currency, expected):
    line = price_line(terms("100006", frequency="ANNUAL"), "MONTHLY", currency)
    assert str(line.amount_per_billing_period) == expected


@pytest.mark.parametrize(("model", "frequency"), [("ONE_TIME_FEE", "ONE_TIME"), ("ONE_TIME_FEE", "MONTHLY"), ("PER_UNIT", "ONE_TIME")])
def test_one_time_fees_are_one_time_amounts_not_recurring(model, frequency):
    line = price_line(terms("499.999", model=model, frequency=frequency, quantity="2"), "ANNUAL", "USD")
    assert not line.recurring
    assert line.one_time_amount == D("1000.00")
    assert line.amount_per_billing_period == D("0.00")


def test_tiered_is_volume_pricing_by_the_tier_holding_the_quantity():
    tiers = (Tier(D("10"), D("10")), Tier(None, D("6")), Tier(D("50"), D("8")))  # unordered on purpose
    assert tier_unit_price(tiers, D("1"), D("99")) == D("10")
    assert tier_unit_price(tiers, D("10"), D("99")) == D("10")
    assert tier_unit_price(tiers, D("10.5"), D("99")) == D("8")
    assert tier_unit_price(tiers, D("50"), D("99")) == D("8")
    assert tier_unit_price(tiers, D("51"), D("99")) == D("6")
    line = price_line(terms("10", model="TIERED", quantity="20", tiers=tiers), "MONTHLY", "USD")
    assert line.list_unit_price == D("8")
    assert line.amount_per_billing_period == D("160.00")


def test_tiers_past_the_last_bound_use_the_last_tier_and_no_tiers_use_the_list_price():
    tiers = (Tier(D("10"), D("10")), Tier(D("20"), D("9")))
    assert tier_unit_price(tiers, D("100"), D("99")) == D("9")
    assert tier_unit_price((), D("100"), D("99")) == D("99")


@pytest.mark.parametrize("model", ["HOURLY", "RAMPED", "FLAT", "PER_UNIT"])
def test_hourly_ramped_and_flat_price_like_per_unit(model):
    line = price_line(terms("150", model=model, quantity="40"), "QUARTERLY", "USD")
    assert line.amount_per_billing_period == D("18000.00")


def test_a_discount_percent_derives_the_net_price():
    line = price_line(terms("200", discount_percent=D("12.5")), "MONTHLY", "USD")
    assert line.net_unit_price == D("175")
    assert str(line.discount_percent) == "12.5000"
    assert line.amount_per_billing_period == D("175.00")


def test_a_net_price_derives_the_discount_to_four_places():
    line = price_line(terms("300", net_unit_price=D("200")), "MONTHLY", "USD")
    assert str(line.discount_percent) == "33.3333"
    assert line.net_unit_price == D("200")
    assert line.amount_per_billing_period == D("200.00")


def test_neither_gives_the_list_price_and_a_markup_is_a_negative_discount():
    plain = price_line(terms("80"), "MONTHLY", "USD")
    assert plain.net_unit_price == D("80") and plain.discount_percent == D("0")
    markup = price_line(terms("80", net_unit_price=D("100")), "MONTHLY", "USD")
    assert markup.discount_percent == D("-25.0000")


def test_a_free_list_price_has_no_discount():
    assert price_line(terms("0", net_unit_price=D("5")), "MONTHLY", "USD").discount_percent == D("0")


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"quantity": "0"}, "quantity"),
        ({"quantity": "-1"}, "quantity"),
        ({"discount_percent": D("5"), "net_unit_price": D("1")}, "netUnitPrice"),
        ({"discount_percent": D("100.01")}, "discountPercent"),
        ({"discount_percent": D("-1")}, "discountPercent"),
        ({"net_unit_price": D("-0.01")}, "netUnitPrice"),
        ({"frequency": "WEEKLY"}, "priceFrequency"),
    ],
)
def test_unpriceable_terms_name_the_field(kw, field):
    with pytest.raises(PricingError) as raised:
        price_line(terms(**kw), "MONTHLY", "USD")
    assert raised.value.field == field


def test_locked_products_report_a_net_price_below_list():
    assert price_line(terms("100", locked=True, discount_percent=D("1")), "MONTHLY", "USD").locked_below_list
    assert not price_line(terms("100", locked=True), "MONTHLY", "USD").locked_below_list
    assert not price_line(terms("100", locked=False, discount_percent=D("50")), "MONTHLY", "USD").locked_below_list
    assert not price_line(terms("100", locked=True, net_unit_price=D("120")), "MONTHLY", "USD").locked_below_list


def test_totals_sum_rounded_lines_and_value_the_contract_over_the_term():
    lines = [
        price_line(terms("100", discount_percent=D("10")), "QUARTERLY", "USD"),  # 270.00 per quarter
        price_line(terms("1200", frequency="ANNUAL", quantity="2"), "QUARTERLY", "USD"),  # 600.00 per quarter
        price_line(terms("500", model="ONE_TIME_FEE", frequency="ONE_TIME", net_unit_price=D("450")), "QUARTERLY", "USD"),
    ]
    totals = quote_totals(lines, "QUARTERLY", 24, "USD")
    assert totals.recurring_per_billing_period == D("870.00")
    assert totals.one_time == D("450.00")
    assert totals.total_contract_value == D("7410.00")  # 870 x 8 quarters + 450
    assert totals.list_total_contract_value == D("7700.00")  # 900 x 8 + 500
    assert str(totals.max_discount_percent) == "10.0000"
    assert not totals.locked_below_list


def test_contract_value_for_a_term_that_is_not_whole_billing_periods():
    # 1000.00 per year over 18 months = 1500.00; 100.00 per quarter over 1 month = 33.33
    assert contract_value(D("1000.00"), D("0"), "ANNUAL", 18, "USD") == D("1500.00")
    assert contract_value(D("100.00"), D("0"), "QUARTERLY", 1, "USD") == D("33.33")
    assert contract_value(D("100"), D("0"), "QUARTERLY", 1, "JPY") == D("33")


def test_empty_quote_totals_are_zero_in_minor_units():
    totals = quote_totals([], "MONTHLY", 12, "KWD")
    assert str(totals.recurring_per_billing_period) == "0.000"
    assert str(totals.total_contract_value) == "0.000"
    assert str(totals.max_discount_percent) == "0.0000"


def test_locked_below_list_on_any_line_flags_the_totals():
    lines = [price_line(terms("100"), "MONTHLY", "USD"), price_line(terms("100", locked=True, net_unit_price=D("99")), "MONTHLY", "USD")]
    assert quote_totals(lines, "MONTHLY", 12, "USD").locked_below_list


prices = st.decimals(min_value=0, max_value=10**7, places=6, allow_nan=False, allow_infinity=False)
quantities = st.decimals(min_value=D("0.000001"), max_value=10**5, places=6, allow_nan=False, allow_infinity=False)
percents = st.decimals(min_value=0, max_value=100, places=4, allow_nan=False, allow_infinity=False)
recurring = st.sampled_from(["MONTHLY", "QUARTERLY", "SEMI_ANNUAL", "ANNUAL"])
currencies = st.sampled_from(["JPY", "USD", "KWD"])


@given(prices, quantities, percents, recurring, recurring, currencies)
def test_discounted_amount_never_exceeds_list_and_round_trips(price, quantity, discount, frequency, billing, currency):
    line = price_line(LineTerms("PER_UNIT", frequency, quantity, price, discount_percent=discount), billing, currency)
    assert line.amount_per_billing_period <= line.list_amount_per_billing_period
    assert line.discount_percent == discount
    # giving the derived net price back yields the same amount
    again = price_line(LineTerms("PER_UNIT", frequency, quantity, price, net_unit_price=line.net_unit_price), billing, currency)
    assert again.amount_per_billing_period == line.amount_per_billing_period


@given(st.lists(st.tuples(prices, quantities, recurring), max_size=8), recurring, st.integers(1, 120), currencies)
def test_whole_periods_contract_value_is_exactly_periods_times_the_billed_amount(raw, billing, term, currency):
    lines = [price_line(LineTerms("PER_UNIT", f, q, p), billing, currency) for p, q, f in raw]
    months = {"MONTHLY": 1, "QUARTERLY": 3, "SEMI_ANNUAL": 6, "ANNUAL": 12}[billing]
    whole_term = months * term
    totals = quote_totals(lines, billing, whole_term, currency)
    assert totals.recurring_per_billing_period == sum((line.amount_per_billing_period for line in lines), D(0))
    assert totals.total_contract_value == totals.recurring_per_billing_period * term


def test_a_markup_is_carried_to_a_new_list_price_as_a_net_price_and_a_discount_as_itself():
    assert carried_net_price(terms(price="90"), D("-20")) == D("108")
    assert carried_net_price(terms(price="90"), D("25")) is None
    assert carried_net_price(terms(price="90"), D("0")) is None
