"""The connector's side of the quote snapshot contract: it reads the example the api writes
(``tests/contract/fixtures/quote_snapshot.json``, kept equal to the api's output by the api's test
``test_quote_snapshot_contract.py``) with its own reader, keeps it exactly, and pushes it; a snapshot
it cannot read is refused naming the field, and values the api added since are read as unsupported."""

from __future__ import annotations

import copy
import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from dps_billing.domain.mapping import plan_push
from dps_billing.domain.notices import NoticeCode
from dps_billing.domain.quote_snapshot import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteStatus,
    SnapshotError,
    Unsupported,
)

EXAMPLE = Path(__file__).resolve().parents[4] / "tests" / "contract" / "fixtures" / "quote_snapshot.json"


def example() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return copy.deepcopy(body)


def test_the_api_example_is_read_in_the_connector_types(now):
    quote = QuoteSnapshot.from_json(example())
    assert (quote.id, quote.organization_id, quote.status) == (UUID(int=1), UUID(int=2), QuoteStatus.APPROVED)
    assert (quote.billing_frequency, quote.billing_period_months, quote.currency) == (
        BillingFrequency.QUARTERLY, 3, "USD"
    )
    assert (quote.opportunity_crm_id, quote.start_date, quote.end_date) == ("006-CRM-42", date(2027, 1, 1),
                                                                         date(2027, 12, 31))
    assert [(line.price_model, line.price_frequency) for line in quote.lines] == [
        (PriceModel.PER_UNIT, PriceFrequency.MONTHLY),
        (PriceModel.TIERED, PriceFrequency.ANNUAL),
        (PriceModel.ONE_TIME_FEE, PriceFrequency.ONE_TIME),
    ]
    first = quote.lines[0]
    assert (first.quantity, first.unit_amount, first.amount) == (Decimal("2.5"), Decimal("360.30"), Decimal("900.75"))


def test_the_connector_keeps_exactly_what_the_api_wrote():
    # the push stores to_json() and its worker reads it again
    assert QuoteSnapshot.from_json(example()).to_json() == example()


def test_the_api_example_is_pushed_without_its_tiered_line(now):
    plan = plan_push(QuoteSnapshot.from_json(example()), now)
    assert not plan.errors
    assert [line.line_id for line in plan.lines] == [str(UUID(int=0x101)), str(UUID(int=0x103))]
    assert [(w.code, w.line_id) for w in plan.warnings if w.code is NoticeCode.LINE_SKIPPED] == [
        (NoticeCode.LINE_SKIPPED, str(UUID(int=0x102)))
    ]
    assert [line.price.unit_amount for line in plan.lines] == [36030, 45000]


def test_a_price_model_the_api_added_since_is_skipped_like_a_tiered_line(now):
    body = example()
    body["lines"][0]["priceModel"] = "USAGE_BASED"
    body["lines"][0]["priceFrequency"] = "WEEKLY"
    quote = QuoteSnapshot.from_json(body)
    assert (quote.lines[0].price_model, quote.lines[0].price_frequency) == (
        Unsupported("USAGE_BASED"), Unsupported("WEEKLY")
    )
    assert quote.to_json() == body
    plan = plan_push(quote, now)
    assert not plan.errors and [line.line_id for line in plan.lines] == [str(UUID(int=0x103))]
    skipped = [w for w in plan.warnings if w.code is NoticeCode.LINE_SKIPPED]
    assert [w.line_id for w in skipped] == [str(UUID(int=0x101)), str(UUID(int=0x102))]
    assert "USAGE_BASED prices are not pushed" in skipped[0].message


def test_a_status_the_api_added_since_is_not_approved(now):
    body = example()
    body["status"] = "SENT"
    quote = QuoteSnapshot.from_json(body)
    assert quote.status == Unsupported("SENT") and quote.to_json() == body
    plan = plan_push(quote, now)
    assert plan.blocked and plan.errors[0].code is NoticeCode.QUOTE_NOT_APPROVED
    assert "this one is SENT" in plan.errors[0].message


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda body: body.update(billingFrequency="WEEKLY"), "billingFrequency"),
        (lambda body: body.update(status=None), "status"),
        (lambda body: body["lines"][0].update(priceModel=3), "priceModel"),
        (lambda body: body["lines"][0].update(quantity=2.5), "quantity"),
        (lambda body: body["lines"][0].update(unitAmount="NaN"), "unitAmount"),
        (lambda body: body.update(subscriptionTermMonths=True), "subscriptionTermMonths"),
        (lambda body: body.update(startDate="2027-02-30"), "startDate"),
        (lambda body: body["totals"].pop("oneTime"), "oneTime"),
    ],
)
def test_a_body_the_connector_cannot_read_is_refused_naming_the_field(change, field):
    body = example()
    change(body)
    with pytest.raises(SnapshotError, match=field):
        QuoteSnapshot.from_json(body)
