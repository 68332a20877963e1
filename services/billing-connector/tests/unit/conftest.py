"""Quote snapshots for the mapping tests: an approved USD quote with one monthly line unless told."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import pytest

from dps_billing.domain.quote_snapshot import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteSnapshotLine,
    QuoteStatus,
)

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)

LineFactory = Callable[..., QuoteSnapshotLine]
QuoteFactory = Callable[..., QuoteSnapshot]


@pytest.fixture
def now() -> datetime:
    return NOW


@pytest.fixture
def make_line() -> LineFactory:
    positions = iter(range(1, 10_000))

    def make(**changes: Any) -> QuoteSnapshotLine:
        model = changes.get("price_model", PriceModel.PER_UNIT)
        frequency = changes.get("price_frequency", PriceFrequency.MONTHLY)
        one_time = model is PriceModel.ONE_TIME_FEE or frequency is PriceFrequency.ONE_TIME
        line = QuoteSnapshotLine(
            id=uuid4(),
            position=next(positions),
            product_id=uuid4(),
            product_spec_id="SPEC-1",
            product_version=3,
            product_name="Analytics Platform",
            product_short_name="Analytics",
            custom_name=None,
            price_model=model,
            price_frequency=frequency,
            quantity=Decimal("1"),
            unit_amount=Decimal("100.00"),
            recurring=not one_time,
            amount=Decimal("100.00"),
        )
        return replace(line, **changes)

    return make


@pytest.fixture
def make_quote(make_line: LineFactory) -> QuoteFactory:
    def make(**changes: Any) -> QuoteSnapshot:
        quote = QuoteSnapshot(
            id=UUID("7a0c2b7e-1111-4c5e-9a53-2f3c4d5e6f70"),
            organization_id=uuid4(),
            name="Acme renewal 2026",
            status=QuoteStatus.APPROVED,
            owner_user_id=uuid4(),
            opportunity_id=uuid4(),
            opportunity_crm_id="006Dn00000ABCDE",
            currency="USD",
            billing_frequency=BillingFrequency.MONTHLY,
            subscription_term_months=12,
            start_date=date(2026, 4, 1),
            end_date=date(2026, 3, 31),
            pricebook_id=uuid4(),
            pricebook_version=2,
            recurring_per_billing_period=Decimal("100.00"),
            one_time=Decimal("0"),
            total_contract_value=Decimal("1200.00"),
            lines=changes.pop("lines") if "lines" in changes else (make_line(),),
        )
        return replace(quote, **changes)

    return make
