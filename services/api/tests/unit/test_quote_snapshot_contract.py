"""The api's side of the quote snapshot contract: what it writes for a known quote is the committed
example ``tests/contract/fixtures/quote_snapshot.json``, which the billing connector's tests read with
the connector's own reader. A change to the snapshot the api writes fails here until the example is
rewritten (``UPDATE_CONTRACT_EXAMPLES=1``), and then fails the connector's tests if it breaks its reader."""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime
from decimal import Decimal as D
from pathlib import Path
from uuid import UUID

from dps_api.domain.pricing import QuoteTotals
from dps_api.domain.quote_snapshot import snapshot
from dps_api.domain.quote_views import QuoteLineView, QuoteView
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus
from dps_api.schemas.quote_snapshots import render_quote_snapshot

EXAMPLE = Path(__file__).resolve().parents[4] / "tests" / "contract" / "fixtures" / "quote_snapshot.json"


def _line(n: int, model: PriceModel, frequency: PriceFrequency, quantity: str, net: str, *,
          per_period: str | None, once: str | None, short_name: str | None = None,
          custom_name: str | None = None) -> QuoteLineView:
    return QuoteLineView(
        id=UUID(int=0x100 + n), position=n, product_id=UUID(int=0x200 + n), product_spec_id=f"SPEC-{n}",
        product_version=n + 1, product_name=f"Product {n}", product_short_name=short_name, custom_name=custom_name,
        price_model=model, price_frequency=frequency, locked=False, quantity=D(quantity), list_unit_price=D(net),
        discount_percent=D("0.0000"), net_unit_price=D(net),
        amount_per_billing_period=None if per_period is None else D(per_period),
        one_time_amount=None if once is None else D(once),
    )


def example_quote() -> QuoteView:
    """An approved quarterly quote with a per-unit line (fractional quantity), a tiered line (the
    connector skips it) and a one-time fee, with every optional field set."""
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    lines = (
        _line(1, PriceModel.PER_UNIT, PriceFrequency.MONTHLY, "2.5", "120.10", per_period="900.75", once=None,
              short_name="CRM Pro", custom_name="CRM for Acme"),
        _line(2, PriceModel.TIERED, PriceFrequency.ANNUAL, "10", "1200", per_period="3000.00", once=None),
        _line(3, PriceModel.ONE_TIME_FEE, PriceFrequency.ONE_TIME, "1", "450", per_period=None, once="450.00"),
    )
    return QuoteView(
        id=UUID(int=1), organization_id=UUID(int=2), name="Acme renewal", opportunity_id=UUID(int=3),
        owner_user_id=UUID(int=4), status=QuoteStatus.APPROVED, currency="USD",
        billing_frequency=BillingFrequency.QUARTERLY, subscription_term_months=12, start_date=date(2027, 1, 1),
        end_date=date(2027, 12, 31), pricebook_id=UUID(int=5), pricebook_version=7,
        totals=QuoteTotals(D("3900.75"), D("450.00"), D("16053.00"), D("16053.00"), D("0.0000"), False),
        line_count=len(lines), created_at=moment, updated_at=moment, lines=lines,
    )


def rendered() -> str:
    return json.dumps(render_quote_snapshot(snapshot(example_quote(), "006-CRM-42")), indent=2) + "\n"


def test_the_committed_example_is_what_the_api_writes():
    if os.environ.get("UPDATE_CONTRACT_EXAMPLES") == "1":
        EXAMPLE.write_text(rendered())
    assert EXAMPLE.read_text() == rendered(), (
        "the api's quote snapshot changed: rewrite the example with UPDATE_CONTRACT_EXAMPLES=1, then run the "
        "billing connector's contract tests (services/billing-connector/tests/unit/test_quote_snapshot_contract.py)"
    )


def test_the_example_covers_every_field_and_the_line_kinds():
    body = json.loads(rendered())
    assert None not in {value for value in body.values() if not isinstance(value, dict | list)}
    assert [line["priceModel"] for line in body["lines"]] == ["PER_UNIT", "TIERED", "ONE_TIME_FEE"]
    assert [line["recurring"] for line in body["lines"]] == [True, True, False]
    assert body["lines"][0]["unitAmount"] == "360.30"  # 120.10 a month, billed quarterly
