"""The per-currency formatter (``currency_format``) writes exactly what the functions it replaced wrote.

The references below are ``round_money``, ``round_percent``, ``format_price`` and ``format_money`` as
they were before the formatter (one exponent lookup and one decimal context per amount): a quote's
JSON must stay byte for byte what it was, in every currency and for every stored value.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dps_api.domain.money import (
    WORKING_PRECISION,
    UnsupportedCurrency,
    currency_exponent,
    currency_format,
    format_money,
    format_price,
    round_money,
    round_percent,
)

# exponents 0 (JPY, ISK, CLP), 2 (USD, EUR), 3 (KWD, BHD, TND), 4 (CLF, UYW)
CURRENCIES = ["JPY", "ISK", "CLP", "USD", "EUR", "KWD", "BHD", "TND", "CLF", "UYW"]


def reference_round_money(amount: Decimal, currency: str) -> Decimal:
    with localcontext(prec=WORKING_PRECISION):
        return amount.quantize(Decimal(1).scaleb(-currency_exponent(currency)), rounding=ROUND_HALF_UP)


def reference_round_percent(value: Decimal) -> Decimal:
    with localcontext(prec=WORKING_PRECISION):
        return value.quantize(Decimal(1).scaleb(-4), rounding=ROUND_HALF_UP)


def reference_format_price(value: Decimal, currency: str) -> str:
    # the old code worked in the default 28-digit context, so a price of more digits lost its last ones
    # or failed (a 500); the formatter works in the working precision: the reference does too
    with localcontext(prec=WORKING_PRECISION, rounding=ROUND_HALF_UP):
        exponent = currency_exponent(currency)
        normalized = value.normalize()
        places = normalized.as_tuple().exponent
        if isinstance(places, int) and -places < exponent:
            normalized = value.quantize(Decimal(1).scaleb(-exponent))
    text = format(normalized, "f")
    return text[1:] if text.startswith("-") and Decimal(text) == 0 else text


def reference_format_money(amount: Decimal, currency: str) -> str:
    return format(reference_round_money(amount, currency), "f")


def outcome(function, *args):
    """What a call gives: its result, or the kind of error it raises (both sides must agree)."""
    try:
        return function(*args)
    except (InvalidOperation, UnsupportedCurrency) as exc:
        return type(exc)


def test_the_currencies_cover_every_exponent():
    assert {currency_exponent(c) for c in CURRENCIES} == {0, 2, 3, 4}
    assert currency_format("KWD").exponent == 3 and currency_format("KWD") is currency_format("KWD")


# stored values: up to 6 places (unit prices), amounts at minor units, trailing zeros, exponents
# written both ways, signed zeros
SPECIAL = ["0", "-0", "0E-8", "-0.000", "0E+3", "1E+3", "-1E+3", "100", "100.000000", "11.010000", "0.0125",
           "-0.0125", "0.005", "-0.005", "0.004999", "1.125", "-2.5", "2.5", "1.0005", "12", "999999999999.999999",
           "0.000001", "123456789012345678901234.5", "NaN", "-NaN", "Infinity", "-Infinity"]
decimals = st.one_of(
    st.sampled_from([Decimal(s) for s in SPECIAL]),
    st.decimals(allow_nan=True, allow_infinity=True),  # any exponent, any digits
    st.decimals(min_value=-10**12, max_value=10**12, places=6),
    st.integers(min_value=-10**15, max_value=10**15).flatmap(
        lambda n: st.integers(min_value=-8, max_value=3).map(lambda e: Decimal(n).scaleb(e))
    ),
)


@given(decimals, st.sampled_from(CURRENCIES))
@example(Decimal("-0"), "USD")
@example(Decimal("-0"), "JPY")
@example(Decimal("1E+3"), "JPY")
@example(Decimal("0.0125"), "USD")
@example(Decimal("1E+28"), "USD")
@example(Decimal("10000000000000000000000000001.5"), "JPY")
def test_prices_and_amounts_are_written_as_before(value, currency):
    assert outcome(format_price, value, currency) == outcome(reference_format_price, value, currency)
    assert outcome(currency_format(currency).price, value) == outcome(reference_format_price, value, currency)
    assert outcome(format_money, value, currency) == outcome(reference_format_money, value, currency)
    assert outcome(currency_format(currency).money, value) == outcome(reference_format_money, value, currency)


@given(decimals, st.sampled_from(CURRENCIES))
def test_rounding_gives_the_same_digits_and_exponent_as_before(value, currency):
    new, old = outcome(round_money, value, currency), outcome(reference_round_money, value, currency)
    assert new == old or (isinstance(new, Decimal) and new.is_nan() and old.is_nan())
    if isinstance(new, Decimal):
        assert new.as_tuple() == old.as_tuple()  # "1.0" and "1.00" are written differently
    percent, old_percent = outcome(round_percent, value), outcome(reference_round_percent, value)
    if isinstance(percent, Decimal):
        assert percent.as_tuple() == old_percent.as_tuple()
    else:
        assert percent == old_percent


@pytest.mark.parametrize("code", ["ABC", "XAU", "XXX"])
def test_a_currency_that_cannot_price_has_no_formatter(code):
    with pytest.raises(UnsupportedCurrency):
        currency_format(code)
    with pytest.raises(UnsupportedCurrency):
        format_money(Decimal(1), code)
