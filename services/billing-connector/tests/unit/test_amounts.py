"""Amounts in the billing platform's minor units: zero-decimal, ISK/UGX, three-decimal, the rest."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dps_billing.domain.amounts import (
    THREE_DECIMAL,
    WHOLE_UNITS_AS_TWO_DECIMALS,
    ZERO_DECIMAL,
    MinorAmount,
    from_minor_units,
    to_minor_units,
)


@pytest.mark.parametrize(("amount", "currency", "expected"), [
    ("10", "USD", MinorAmount(1000, True)),
    ("10.01", "USD", MinorAmount(1001, True)),
    ("10.005", "USD", MinorAmount(1001, False)),
    ("10.0049", "USD", MinorAmount(1000, False)),
    ("0", "USD", MinorAmount(0, True)),
    ("99.999", "eur", MinorAmount(10000, False)),
    ("1500", "JPY", MinorAmount(1500, True)),
    ("1500.5", "JPY", MinorAmount(1501, False)),
    ("1500.4", "jpy", MinorAmount(1500, False)),
    ("52000", "KRW", MinorAmount(52000, True)),
    ("5", "ISK", MinorAmount(500, True)),
    ("5.5", "ISK", MinorAmount(600, False)),
    ("5.49", "ISK", MinorAmount(500, False)),
    ("10000", "UGX", MinorAmount(1000000, True)),
    ("10000.5", "UGX", MinorAmount(1000100, False)),
    ("1.23", "KWD", MinorAmount(1230, True)),
    ("1.2345", "KWD", MinorAmount(1230, False)),
    ("1.235", "KWD", MinorAmount(1240, False)),
    ("1.234", "KWD", MinorAmount(1230, False)),
    ("0.5", "BHD", MinorAmount(500, True)),
    ("12.345", "OMR", MinorAmount(12350, False)),
])
def test_minor_units(amount: str, currency: str, expected: MinorAmount) -> None:
    assert to_minor_units(Decimal(amount), currency) == expected


def test_the_currency_lists_are_stripes() -> None:
    assert ZERO_DECIMAL == {"BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "VND", "VUV",
                            "XAF", "XOF", "XPF"}
    assert WHOLE_UNITS_AS_TWO_DECIMALS == {"ISK", "UGX"}
    assert THREE_DECIMAL == {"BHD", "JOD", "KWD", "OMR", "TND"}
    assert not (ZERO_DECIMAL & WHOLE_UNITS_AS_TWO_DECIMALS) and not (ZERO_DECIMAL & THREE_DECIMAL)


@pytest.mark.parametrize("currency", sorted(ZERO_DECIMAL))
def test_zero_decimal_currencies_are_sent_as_they_are(currency: str) -> None:
    assert to_minor_units(Decimal("1234"), currency) == MinorAmount(1234, True)


@pytest.mark.parametrize("currency", sorted(WHOLE_UNITS_AS_TWO_DECIMALS))
def test_isk_and_ugx_always_end_in_00(currency: str) -> None:
    for thousandths in range(0, 5000, 7):
        value = to_minor_units(Decimal(thousandths) / 1000, currency).value
        assert value % 100 == 0


@pytest.mark.parametrize("currency", sorted(THREE_DECIMAL))
def test_three_decimal_currencies_always_end_in_0(currency: str) -> None:
    for ten_thousandths in range(0, 30000, 13):
        minor = to_minor_units(Decimal(ten_thousandths) / 10000, currency)
        assert minor.value % 10 == 0
        assert abs(Decimal(minor.value) - Decimal(ten_thousandths) / 10) <= 5


def test_back_to_units_for_messages() -> None:
    assert from_minor_units(1001, "USD") == Decimal("10.01")
    assert from_minor_units(1500, "JPY") == Decimal("1500")
    assert from_minor_units(600, "ISK") == Decimal("6")
    assert from_minor_units(1240, "KWD") == Decimal("1.24")


def test_a_non_finite_amount_is_refused() -> None:
    with pytest.raises(ValueError):
        to_minor_units(Decimal("NaN"), "USD")
