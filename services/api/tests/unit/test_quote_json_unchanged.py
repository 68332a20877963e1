"""A 500-line quote's JSON is byte for byte what it was before the read path was made faster (issue 19).

The quotes are made from a seeded generator: values of every shape the tables hold (trailing zeros,
exponents written both ways, signed zeros, sub-cent prices, markups, one-time and recurring lines, no
short name, non-ASCII names) in currencies of each exponent (JPY 0, USD 2, KWD 3, CLF 4). Each digest was
taken from the rendering before the per-currency formatter and the named-tuple line views (commit
a826654), with the same ``render_quote`` and ``dps_common.json.dumps`` the responses go through.
"""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from uuid import UUID

import pytest

from dps_common.json import dumps

from dps_api.domain.pricing import QuoteTotals
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus
from dps_api.schemas.quotes import render_quote

DIGESTS = {
    "JPY": "7d4d5085d6d8320456fabdd204ded69ac1cf394094674e05e39c22c0858c1306",
    "USD": "528d10c44897ac5f149bcd9b3a59a518c5f1b17fc8ebdb9868e66284c7675053",
    "KWD": "a35fd0a5224d2b369d3cb8aed146f0c5dd8bb9e84cdc9b3d888cc14f2f3daa1f",
    "CLF": "f06ba44252fff8249a718d07e08d70e8d3ecfa40eaaf0f4ccdde716c1ceab00e",
}
ODD_VALUES = ["0", "-0", "0E-8", "0.000000", "1E+3", "100.000000", "11.010000", "0.0125", "0.5", "12345678.9"]


def _decimal(rng: random.Random, places: int) -> Decimal:
    if rng.random() < 0.1:
        return Decimal(rng.choice(ODD_VALUES))
    digits = rng.randrange(0, 10 ** rng.randrange(1, 12))
    return Decimal(digits).scaleb(-rng.randrange(0, places + 1))


def _line(rng: random.Random, position: int) -> QuoteLineView:
    model = rng.choice(list(PriceModel))
    frequency = PriceFrequency.ONE_TIME if model == PriceModel.ONE_TIME_FEE else rng.choice(list(PriceFrequency))
    one_time = model == PriceModel.ONE_TIME_FEE or frequency == PriceFrequency.ONE_TIME
    amount = _decimal(rng, 4)
    return QuoteLineView(
        id=UUID(int=rng.getrandbits(128)),
        position=position,
        product_id=UUID(int=rng.getrandbits(128)),
        product_spec_id=f"SPEC-{rng.randrange(10**6):06d}",
        product_version=rng.randrange(1, 40),
        product_name=rng.choice(["Seat", "Siège « pro »", 'Quoted "name"', "席 ライセンス", "Back\\slash"]),
        product_short_name=rng.choice([None, "S", "Sg"]),
        custom_name=rng.choice([None, None, "API calls", "Élan\nnew line"]),
        price_model=model,
        price_frequency=frequency,
        locked=rng.random() < 0.2,
        quantity=_decimal(rng, 6),
        list_unit_price=_decimal(rng, 6),
        discount_percent=Decimal(rng.randrange(-50_0000, 100_0001)).scaleb(-4),
        net_unit_price=_decimal(rng, 6),
        amount_per_billing_period=None if one_time else amount,
        one_time_amount=amount if one_time else None,
    )


def quote(currency: str, size: int = 500) -> QuoteView:
    rng = random.Random(f"issue-19-{currency}")
    created = datetime(2026, 11, 25, 9, 15, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    return QuoteView(
        id=UUID(int=rng.getrandbits(128)),
        organization_id=UUID(int=rng.getrandbits(128)),
        name="Initech renewal – 2027",
        opportunity_id=UUID(int=rng.getrandbits(128)),
        owner_user_id=UUID(int=rng.getrandbits(128)),
        status=QuoteStatus.DRAFT,
        currency=currency,
        billing_frequency=BillingFrequency.ANNUAL,
        subscription_term_months=24,
        start_date=date(2027, 1, 1),
        end_date=None,
        pricebook_id=None,
        pricebook_version=None,
        totals=QuoteTotals(
            recurring_per_billing_period=_decimal(rng, 6),
            one_time=Decimal("-0"),
            total_contract_value=_decimal(rng, 6),
            list_total_contract_value=Decimal("1E+3"),
            max_discount_percent=Decimal("-12.5000"),
            locked_below_list=True,
        ),
        line_count=size,
        created_at=created,
        updated_at=created.astimezone(UTC) + timedelta(seconds=41),
        lines=tuple(_line(rng, position) for position in range(1, size + 1)),
    )


def quote_json(currency: str) -> bytes:
    return dumps(render_quote(quote(currency)))


@pytest.mark.parametrize("currency", sorted(DIGESTS))
def test_a_500_line_quote_renders_to_the_same_bytes_as_before(currency):
    body = quote_json(currency)
    assert hashlib.sha256(body).hexdigest() == DIGESTS[currency], body[:600]


def test_the_generated_quotes_hold_the_odd_values():
    rendered = render_quote(quote("USD"))
    lines = rendered["lines"]
    assert len(lines) == 500
    prices = {line["listUnitPrice"] for line in lines} | {line["netUnitPrice"] for line in lines}
    assert {"0.00", "1000.00", "0.0125", "11.01"} <= prices  # signed zeros, exponents, sub-cent, trailing zeros
    assert any(line["oneTimeAmount"] is not None for line in lines)
    assert any(line["discountPercent"].startswith("-") for line in lines)
    assert rendered["totals"]["oneTime"] == "-0.00"  # a stored negative zero total is written as it was
