"""A line's arithmetic on an explicit working context gives exactly what the ``localcontext`` blocks it
replaced gave (issue 19: a quote's edit prices every line, and entering a context per operation cost
more than the operations). The references are the former bodies."""

from __future__ import annotations

from decimal import Decimal, localcontext

from hypothesis import given
from hypothesis import strategies as st

from dps_api.domain.money import WORKING_PRECISION, round_percent
from dps_api.domain.pricing import _amount, discount_from_net, net_from_discount


def reference_amount(unit_price: Decimal, quantity: Decimal, billing_months: int, price_months: int) -> Decimal:
    with localcontext(prec=WORKING_PRECISION):
        return unit_price * quantity * billing_months / price_months


def reference_net_from_discount(list_price: Decimal, discount_percent: Decimal) -> Decimal:
    with localcontext(prec=WORKING_PRECISION):
        return list_price * (Decimal(100) - discount_percent) / Decimal(100)


def reference_discount_from_net(list_price: Decimal, net_price: Decimal) -> Decimal:
    if list_price == 0:
        return round_percent(Decimal(0))
    with localcontext(prec=WORKING_PRECISION):
        return round_percent((list_price - net_price) * Decimal(100) / list_price)


prices = st.one_of(
    st.decimals(min_value=0, max_value=10**12, places=6),
    st.decimals(min_value=0, max_value=10**6, places=2),
    st.sampled_from([Decimal(s) for s in ("0", "0E-8", "1E+3", "0.0125", "11.010000", "33.333333")]),
)
percents = st.decimals(min_value=-500, max_value=100, places=4)
months = st.sampled_from([1, 3, 6, 12])


@given(prices, prices, months, months)
def test_amounts_are_the_same_digits(unit_price, quantity, billing_months, price_months):
    new = _amount(unit_price, quantity, billing_months, price_months)
    assert new.as_tuple() == reference_amount(unit_price, quantity, billing_months, price_months).as_tuple()


@given(prices, percents, prices)
def test_discounts_and_net_prices_are_the_same_digits(list_price, discount, net_price):
    assert net_from_discount(list_price, discount).as_tuple() == reference_net_from_discount(list_price, discount).as_tuple()
    assert discount_from_net(list_price, net_price).as_tuple() == reference_discount_from_net(list_price, net_price).as_tuple()
