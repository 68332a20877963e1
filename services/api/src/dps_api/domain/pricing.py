"""Pricing a quote: unit prices normalised to the billing period, discounts, one-time fees, totals.

Rules (the API documents the same):

- A recurring product is priced per its ``price_frequency`` (MONTHLY 1, QUARTERLY 3, SEMI_ANNUAL 6,
  ANNUAL 12 months). Its amount per billing period is
  ``net unit price x quantity x billing period months / price frequency months``.
- ``ONE_TIME_FEE`` products and ``ONE_TIME`` prices give a one-time amount, never a recurring one.
- ``TIERED`` is volume pricing: the whole quantity takes the unit price of the tier holding it
  (the first tier whose ``up_to`` is open or >= quantity; past the last bounded tier, the last tier).
- ``HOURLY``: the unit is an hour and the quantity is hours per price period; priced like PER_UNIT.
- ``RAMPED`` is priced like ``PER_UNIT`` at its list unit price (ramp schedules are not modelled).
- ``FLAT`` is a fixed fee per price period, multiplied by the quantity (normally 1).
- A line gives either a discount percent or a net unit price (or neither: list price). The other
  is derived; the discount is kept to four decimal places. A net price above list is a markup and
  shows as a negative discount.
- Money is rounded half-up to the currency's minor units only at each line amount and at the
  totals; unit prices and percentages of the computation are exact.
- Totals: recurring per billing period and one-time are the sums of the rounded line amounts (so
  lines always add up). Total contract value = recurring per month x term + one-time, i.e.
  ``recurring per billing period x term / billing period months + one-time``, rounded; when the
  term is a whole number of billing periods it is exactly what the customer is billed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, localcontext

from dps_api.domain.money import WORKING_PRECISION, round_money, round_percent
from dps_api.domain.vocabulary import PERIOD_MONTHS, BillingFrequency, PriceFrequency, PriceModel

__all__ = [
    "PERIOD_MONTHS",
    "BillingFrequency",
    "LineTerms",
    "PriceFrequency",
    "PriceModel",
    "PricedLine",
    "PricingError",
    "QuoteTotals",
    "Tier",
    "billing_period_unit_price",
    "contract_value",
    "is_one_time",
    "price_line",
    "quote_totals",
    "tier_unit_price",
]

HUNDRED = Decimal(100)
ZERO = Decimal(0)
# the arithmetic of a line's price: the operations of a ``localcontext(prec=WORKING_PRECISION)`` block
# without entering one per operation (a quote's edit prices every line)
_WORK = Context(prec=WORKING_PRECISION)


class PricingError(ValueError):
    """Terms that cannot be priced; ``field`` names the offending input."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Tier:
    up_to: Decimal | None  # inclusive upper bound of the quantity; None: no bound
    unit_price: Decimal


@dataclass(frozen=True)
class LineTerms:
    """What prices one line: the pinned product's prices and the caller's negotiation."""

    price_model: PriceModel
    price_frequency: PriceFrequency
    quantity: Decimal
    list_unit_price: Decimal
    tiers: tuple[Tier, ...] = ()
    discount_percent: Decimal | None = None
    net_unit_price: Decimal | None = None
    locked: bool = False


@dataclass(frozen=True)
class PricedLine:
    list_unit_price: Decimal  # the unit list price that applies (tier-resolved)
    net_unit_price: Decimal
    discount_percent: Decimal
    recurring: bool
    amount_per_billing_period: Decimal  # rounded; zero for one-time lines
    one_time_amount: Decimal | None  # rounded; None for recurring lines
    list_amount_per_billing_period: Decimal
    list_one_time_amount: Decimal | None
    locked_below_list: bool  # a locked product's net price under its list price


@dataclass(frozen=True)
class QuoteTotals:
    recurring_per_billing_period: Decimal
    one_time: Decimal
    total_contract_value: Decimal
    list_total_contract_value: Decimal
    max_discount_percent: Decimal
    locked_below_list: bool


def is_one_time(price_model: PriceModel, price_frequency: PriceFrequency) -> bool:
    return price_model == PriceModel.ONE_TIME_FEE or price_frequency == PriceFrequency.ONE_TIME


def tier_unit_price(tiers: Sequence[Tier], quantity: Decimal, default: Decimal) -> Decimal:
    """Volume pricing: the unit price of the tier holding ``quantity`` (``default`` without tiers)."""
    if not tiers:
        return default
    ordered = sorted(tiers, key=lambda t: (t.up_to is None, t.up_to or ZERO))
    for tier in ordered:
        if tier.up_to is None or quantity <= tier.up_to:
            return tier.unit_price
    return ordered[-1].unit_price


def unit_list_price(terms: LineTerms) -> Decimal:
    if terms.price_model == PriceModel.TIERED:
        return tier_unit_price(terms.tiers, terms.quantity, terms.list_unit_price)
    return terms.list_unit_price


def net_from_discount(list_price: Decimal, discount_percent: Decimal) -> Decimal:
    return _WORK.divide(_WORK.multiply(list_price, _WORK.subtract(HUNDRED, discount_percent)), HUNDRED)


def discount_from_net(list_price: Decimal, net_price: Decimal) -> Decimal:
    """Discount percent (4 places) of ``net_price`` against ``list_price``; 0 for a free list price
    (a markup on nothing has no meaningful percentage)."""
    if list_price == ZERO:
        return round_percent(ZERO)
    return round_percent(_WORK.divide(_WORK.multiply(_WORK.subtract(list_price, net_price), HUNDRED), list_price))


def carried_net_price(terms: LineTerms, discount_percent: Decimal) -> Decimal | None:
    """The net unit price that carries a line's markup to a new list price (another currency or
    pricebook); ``None`` when the line keeps its discount percent as it is.

    A re-priced line keeps its discount percent. A markup (a net price above list, shown as a
    negative discount) cannot be given as a discount percent, so it is kept as the net price the
    same percent above the new list price."""
    if discount_percent >= ZERO:
        return None
    return net_from_discount(unit_list_price(terms), discount_percent)


def _check(terms: LineTerms) -> None:
    if terms.quantity <= ZERO:
        raise PricingError("quantity", "must be greater than 0")
    if terms.discount_percent is not None and terms.net_unit_price is not None:
        raise PricingError("netUnitPrice", "give either discountPercent or netUnitPrice, not both")
    if terms.discount_percent is not None and not ZERO <= terms.discount_percent <= HUNDRED:
        raise PricingError("discountPercent", "must be between 0 and 100")
    if terms.net_unit_price is not None and terms.net_unit_price < ZERO:
        raise PricingError("netUnitPrice", "must not be negative")
    if terms.price_frequency not in PERIOD_MONTHS and not is_one_time(terms.price_model, terms.price_frequency):
        raise PricingError("priceFrequency", f"unknown price frequency {terms.price_frequency!r}")


def _amount(unit_price: Decimal, quantity: Decimal, billing_months: int, price_months: int) -> Decimal:
    # multiply before the single division so the ratio (e.g. 1/12) never truncates
    return _WORK.divide(_WORK.multiply(_WORK.multiply(unit_price, quantity), billing_months), price_months)


def price_line(terms: LineTerms, billing_frequency: BillingFrequency, currency: str) -> PricedLine:
    """Price one line for a quote billed every ``billing_frequency`` in ``currency``."""
    _check(terms)
    list_price = unit_list_price(terms)
    if terms.net_unit_price is not None:
        net = terms.net_unit_price
        discount = discount_from_net(list_price, net)
    else:
        discount = round_percent(terms.discount_percent if terms.discount_percent is not None else ZERO)
        net = net_from_discount(list_price, discount)
    locked_below = terms.locked and net < list_price
    if is_one_time(terms.price_model, terms.price_frequency):
        one_time = round_money(_amount(net, terms.quantity, 1, 1), currency)
        list_one_time = round_money(_amount(list_price, terms.quantity, 1, 1), currency)
        zero = round_money(ZERO, currency)
        return PricedLine(list_price, net, discount, False, zero, one_time, zero, list_one_time, locked_below)
    billing_months = PERIOD_MONTHS[billing_frequency]
    price_months = PERIOD_MONTHS[terms.price_frequency]
    amount = round_money(_amount(net, terms.quantity, billing_months, price_months), currency)
    list_amount = round_money(_amount(list_price, terms.quantity, billing_months, price_months), currency)
    return PricedLine(list_price, net, discount, True, amount, None, list_amount, None, locked_below)


def billing_period_unit_price(
    net_unit_price: Decimal, price_model: PriceModel, price_frequency: PriceFrequency, billing_frequency: BillingFrequency
) -> Decimal:
    """What one unit costs for one billing period of the quote (recurring) or once (one-time), unrounded:
    ``net unit price x billing period months / price frequency months``."""
    if is_one_time(price_model, price_frequency):
        return net_unit_price
    return _amount(net_unit_price, Decimal(1), PERIOD_MONTHS[billing_frequency], PERIOD_MONTHS[price_frequency])


def contract_value(recurring_per_billing_period: Decimal, one_time: Decimal, billing_frequency: BillingFrequency,
                   term_months: int, currency: str) -> Decimal:
    with localcontext(prec=WORKING_PRECISION):
        recurring = recurring_per_billing_period * term_months / PERIOD_MONTHS[billing_frequency]
        return round_money(recurring + one_time, currency)


def quote_totals(
    lines: Sequence[PricedLine], billing_frequency: BillingFrequency, term_months: int, currency: str
) -> QuoteTotals:
    if term_months < 1:
        raise PricingError("subscriptionTermMonths", "must be at least 1")
    recurring = round_money(sum((line.amount_per_billing_period for line in lines), ZERO), currency)
    one_time = round_money(sum((line.one_time_amount or ZERO for line in lines), ZERO), currency)
    list_recurring = sum((line.list_amount_per_billing_period for line in lines), ZERO)
    list_one_time = sum((line.list_one_time_amount or ZERO for line in lines), ZERO)
    list_value = contract_value(list_recurring, list_one_time, billing_frequency, term_months, currency)
    return QuoteTotals(
        recurring_per_billing_period=recurring,
        one_time=one_time,
        total_contract_value=contract_value(recurring, one_time, billing_frequency, term_months, currency),
        list_total_contract_value=list_value,
        max_discount_percent=max((line.discount_percent for line in lines), default=round_percent(ZERO)),
        locked_below_list=any(line.locked_below_list for line in lines),
    )
