"""Money: ISO 4217 minor units, half-up rounding, and how amounts and prices are written."""

from decimal import Decimal as D

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dps_api.domain.money import (
    UnsupportedCurrency,
    amount_problem,
    currency_exponent,
    currency_problem,
    format_amount,
    format_decimal,
    format_money,
    format_price,
    is_supported_currency,
    round_money,
    round_percent,
)


@pytest.mark.parametrize(("code", "exponent"), [("JPY", 0), ("USD", 2), ("EUR", 2), ("KWD", 3), ("BHD", 3)])
def test_exponents_follow_iso_4217(code, exponent):
    assert currency_exponent(code) == exponent


@pytest.mark.parametrize("code", ["ABC", "usd", "XAU", "XXX", "XDR", ""])
def test_unknown_and_unitless_currencies_are_refused(code):
    with pytest.raises(UnsupportedCurrency):
        currency_exponent(code)
    assert not is_supported_currency(code)


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        ("0.5", "JPY", "1"),
        ("1.49", "JPY", "1"),
        ("2.5", "JPY", "3"),
        ("-2.5", "JPY", "-3"),
        ("0.005", "USD", "0.01"),
        ("0.004999", "USD", "0.00"),
        ("1.125", "USD", "1.13"),
        ("1.0005", "KWD", "1.001"),
        ("1.0004999", "KWD", "1.000"),
        ("12", "KWD", "12.000"),
    ],
)
def test_round_money_is_half_up_to_minor_units(amount, currency, expected):
    assert str(round_money(D(amount), currency)) == expected
    assert format_money(D(amount), currency) == expected


def test_round_percent_keeps_four_places():
    assert str(round_percent(D("33.333333"))) == "33.3333"
    assert str(round_percent(D("12.34565"))) == "12.3457"
    assert str(round_percent(D("10"))) == "10.0000"


@pytest.mark.parametrize(
    ("price", "currency", "expected"),
    [
        ("100", "USD", "100.00"),
        ("100.000000", "USD", "100.00"),
        ("0.0125", "USD", "0.0125"),
        ("1E+3", "JPY", "1000"),
        ("1000.5", "JPY", "1000.5"),
        ("7", "KWD", "7.000"),
        ("-0", "USD", "0.00"),
    ],
)
def test_unit_prices_show_at_least_minor_units_and_are_never_rounded(price, currency, expected):
    assert format_price(D(price), currency) == expected


def test_format_decimal_is_plain_notation():
    assert format_decimal(D("2.500")) == "2.5"
    assert format_decimal(D("1E+3")) == "1000"
    assert format_decimal(D("-0")) == "0"


@given(st.decimals(min_value=-10**9, max_value=10**9, places=6, allow_nan=False, allow_infinity=False),
       st.sampled_from(["JPY", "USD", "KWD"]))
def test_rounding_moves_at_most_half_a_minor_unit(amount, currency):
    rounded = round_money(amount, currency)
    half_unit = D(1).scaleb(-currency_exponent(currency)) / 2
    assert abs(rounded - amount) <= half_unit
    assert -rounded.as_tuple().exponent == currency_exponent(currency)
    assert round_money(rounded, currency) == rounded


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("USD", None),
        ("JPY", None),
        ("ABC", "ABC is not an ISO 4217 currency code"),
        ("XAU", "XAU has no minor units and cannot be used for prices"),
    ],
)
def test_a_catalog_currency_must_have_minor_units(code, problem):
    assert currency_problem(code) == problem


@pytest.mark.parametrize(
    ("currency", "amount", "problem"),
    [
        ("USD", "100", None),
        ("USD", "0.01", None),
        ("JPY", "100.00", None),  # trailing zeros: still a whole amount
        ("KWD", "1.125", None),
        ("USD", "0.001", "USD amount 0.001 has more decimal places than USD allows (2)"),
        ("JPY", "100.5", "JPY amount 100.5 has more decimal places than JPY allows (0)"),
        ("USD", "-1", "USD amount must not be negative"),
    ],
)
def test_a_catalog_price_fits_the_currency_minor_units(currency, amount, problem):
    assert amount_problem(currency, D(amount)) == problem


@pytest.mark.parametrize(
    ("currency", "amount", "written"),
    [("USD", "100", "100.00"), ("JPY", "100.00", "100"), ("KWD", "1.5", "1.500"), ("USD", "0", "0.00")],
)
def test_a_catalog_price_is_written_at_exactly_the_minor_units(currency, amount, written):
    assert format_amount(currency, D(amount)) == written
