"""Amounts in the billing platform's minor units.

The platform's units are not always ISO 4217's (Stripe's documented rules):

- zero-decimal currencies are sent as they are (JPY 500 -> 500);
- ISK and UGX are sent as two-decimal values that end in 00 (ISK 5 -> 500), so they are rounded to
  a whole unit first;
- three-decimal currencies are sent x1000 with a last digit of 0 (KWD 1.23 -> 1230), so they are
  rounded to a hundredth first;
- every other currency x100.

``unit_amount`` is an integer: an amount that does not fit is rounded half up, and the caller is
told (``exact`` is False) so that it can warn.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

ZERO_DECIMAL = frozenset(
    {"BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "VND", "VUV", "XAF", "XOF", "XPF"}
)
WHOLE_UNITS_AS_TWO_DECIMALS = frozenset({"ISK", "UGX"})
THREE_DECIMAL = frozenset({"BHD", "JOD", "KWD", "OMR", "TND"})


@dataclass(frozen=True)
class MinorAmount:
    value: int  # in the platform's minor units
    exact: bool  # False when the amount was rounded to fit


def _scale_and_step(currency: str) -> tuple[int, int]:
    """Minor units per unit, and the step the platform accepts (in minor units)."""
    code = currency.upper()
    if code in ZERO_DECIMAL:
        return 1, 1
    if code in WHOLE_UNITS_AS_TWO_DECIMALS:
        return 100, 100
    if code in THREE_DECIMAL:
        return 1000, 10
    return 100, 1


def to_minor_units(amount: Decimal, currency: str) -> MinorAmount:
    """``amount`` (in units of ``currency``) as the platform's integer minor units, rounded half up."""
    if not amount.is_finite():
        raise ValueError("an amount must be finite")
    scale, step = _scale_and_step(currency)
    steps = (amount * scale / step).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    value = int(steps) * step
    return MinorAmount(value=value, exact=Decimal(value) == amount * scale)


def from_minor_units(value: int, currency: str) -> Decimal:
    """The amount in units that ``value`` minor units stand for (for messages)."""
    scale, _ = _scale_and_step(currency)
    return Decimal(value) / scale
