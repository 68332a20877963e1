"""Money as ``Decimal`` with ISO 4217 minor units: the only place that knows how to round an amount.

Amounts are rounded half-up to the currency's exponent (JPY 0, USD 2, KWD 3). Unit prices and
intermediate products are never rounded; only line amounts and totals are (see ``pricing``).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal
from functools import lru_cache

from iso4217 import Currency

PERCENT_PLACES = 4
_PERCENT_QUANTUM = Decimal(1).scaleb(-PERCENT_PLACES)
# Wide enough that no product of a 6-place price, a 6-place quantity and a month ratio is ever inexact
# before the final rounding.
WORKING_PRECISION = 60
# rounding to minor units: wide enough for any amount; a context given to ``quantize`` costs less than
# entering a local one per amount
_ROUNDING = Context(prec=WORKING_PRECISION, rounding=ROUND_HALF_UP)


class UnsupportedCurrency(ValueError):
    """Not an ISO 4217 currency with minor units (unknown codes, funds, precious metals, XXX)."""


@lru_cache(maxsize=512)
def _iso_exponent(code: str) -> int | None:
    """ISO 4217's exponent of ``code`` (ValueError for an unknown code, which is not cached). A
    quote's rendering asks for it several times per line."""
    return Currency(code).exponent


def currency_exponent(code: str) -> int:
    """Number of minor-unit digits of ``code``: JPY 0, USD 2, KWD 3."""
    try:
        exponent = _iso_exponent(code)
    except ValueError:
        raise UnsupportedCurrency(f"{code!r} is not an ISO 4217 currency code.") from None
    if exponent is None:
        raise UnsupportedCurrency(f"{code!r} has no minor units and cannot price a quote.")
    return exponent


def currency_problem(code: str) -> str | None:
    """Why ``code`` cannot price anything, or None."""
    try:
        exponent = Currency(code).exponent
    except ValueError:
        return f"{code} is not an ISO 4217 currency code"
    if exponent is None:  # funds, precious metals, XXX
        return f"{code} has no minor units and cannot be used for prices"
    return None


def amount_problem(currency: str, amount: Decimal) -> str | None:
    """Why ``amount`` is not a valid price in ``currency``, or None (the currency must be valid)."""
    if amount < 0:
        return f"{currency} amount must not be negative"
    exponent = currency_exponent(currency)
    if _decimal_places(amount) > exponent:  # "100.00" JPY is a whole amount
        return f"{currency} amount {amount} has more decimal places than {currency} allows ({exponent})"
    return None


def format_amount(currency: str, amount: Decimal) -> str:
    """A valid amount at exactly the currency's minor units: ``"100"`` USD -> ``"100.00"``."""
    return format(amount.quantize(Decimal(1).scaleb(-currency_exponent(currency))), "f")


def _decimal_places(amount: Decimal) -> int:
    """``"100.00"`` has none: the amount is whole. Called on finite amounts only."""
    exponent = amount.normalize(_ROUNDING).as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def is_supported_currency(code: str) -> bool:
    try:
        currency_exponent(code)
    except UnsupportedCurrency:
        return False
    return True


class CurrencyFormat:
    """How one currency's amounts are rounded and written (``currency_format(code)``, built once per
    currency): a quote's rendering writes four amounts per line, and looking the exponent up and
    entering a decimal context for each cost more than the formatting itself."""

    __slots__ = ("currency", "exponent", "_quantum", "_zero")

    def __init__(self, currency: str) -> None:
        self.currency = currency
        self.exponent = currency_exponent(currency)
        self._quantum = Decimal(1).scaleb(-self.exponent)
        self._zero = format(Decimal(0).quantize(self._quantum), "f")  # "0.00": a zero price, of any sign

    def round(self, amount: Decimal) -> Decimal:
        """``amount`` rounded half-up to the minor units."""
        return amount.quantize(self._quantum, ROUND_HALF_UP, _ROUNDING)

    def money(self, amount: Decimal) -> str:
        """An amount rounded to minor units and written with exactly that many places."""
        return format(amount.quantize(self._quantum, ROUND_HALF_UP, _ROUNDING), "f")

    def price(self, value: Decimal) -> str:
        """A unit price: at least the minor units (``"100.00"``), more only when it has them
        (``"0.0125"``), so sub-cent prices are shown exactly and never rounded."""
        if not value.is_finite():  # NaN, Infinity: written as they are
            return format(value.normalize(_ROUNDING), "f")
        at_minor_units = value.quantize(self._quantum, ROUND_HALF_UP, _ROUNDING)
        if at_minor_units != value:  # more places than the minor units: all of them, exactly
            return format(value.normalize(_ROUNDING), "f")
        return format(at_minor_units, "f") if at_minor_units else self._zero


@lru_cache(maxsize=512)
def currency_format(code: str) -> CurrencyFormat:
    """The formatter of ``code`` (UnsupportedCurrency, not cached, for a code that cannot price)."""
    return CurrencyFormat(code)


def round_money(amount: Decimal, currency: str) -> Decimal:
    """``amount`` rounded half-up to the minor units of ``currency``."""
    return currency_format(currency).round(amount)


def round_percent(value: Decimal) -> Decimal:
    """A percentage kept to four decimal places, half-up."""
    return value.quantize(_PERCENT_QUANTUM, ROUND_HALF_UP, _ROUNDING)


def format_decimal(value: Decimal) -> str:
    """Plain notation without trailing zeros: ``Decimal("2.500")`` -> ``"2.5"``, never ``"1E+3"``."""
    text = format(value.normalize(_ROUNDING), "f")
    return "0" if text in ("-0", "") else text


def format_price(value: Decimal, currency: str) -> str:
    """A unit price: at least the currency's minor units (``"100.00"``), more only when it has them
    (``"0.0125"``), so sub-cent prices are shown exactly and never rounded."""
    return currency_format(currency).price(value)


def format_money(amount: Decimal, currency: str) -> str:
    """An amount rounded to minor units and written with exactly that many places."""
    return currency_format(currency).money(amount)
