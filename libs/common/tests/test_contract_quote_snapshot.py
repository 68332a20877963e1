"""The quote snapshot's wire form: what the api writes, the connector reads back exactly, and a body
that breaks the contract is refused with the field named."""

from datetime import date
from decimal import Decimal
from uuid import uuid4

import pytest

from dps_common.contracts.quotes import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteSnapshotLine,
    QuoteStatus,
    SnapshotError,
)


def snapshot() -> QuoteSnapshot:
    line = QuoteSnapshotLine(
        id=uuid4(), position=1, product_id=uuid4(), product_spec_id="CRM-PRO", product_version=3,
        product_name="CRM Professional", product_short_name=None, custom_name="CRM for Acme",
        price_model=PriceModel.PER_UNIT, price_frequency=PriceFrequency.MONTHLY, quantity=Decimal("2.5"),
        unit_amount=Decimal("300.333"), recurring=True, amount=Decimal("750.83"),
    )
    return QuoteSnapshot(
        id=uuid4(), organization_id=uuid4(), name="Acme renewal", status=QuoteStatus.APPROVED,
        owner_user_id=uuid4(), opportunity_id=None, opportunity_crm_id=None, currency="USD",
        billing_frequency=BillingFrequency.QUARTERLY, subscription_term_months=12, start_date=date(2027, 1, 1),
        end_date=None, pricebook_id=None, pricebook_version=None, recurring_per_billing_period=Decimal("750.83"),
        one_time=Decimal("0.00"), total_contract_value=Decimal("3003.32"), lines=(line,),
    )


def test_a_snapshot_reads_back_exactly_what_was_written():
    original = snapshot()
    assert QuoteSnapshot.from_json(original.to_json()) == original
    assert original.billing_period_months == 3


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda body: body.update(status="SENT"), "status"),
        (lambda body: body["lines"][0].update(quantity=2.5), "quantity"),
        (lambda body: body["lines"][0].update(unitAmount="NaN"), "unitAmount"),
        (lambda body: body.update(subscriptionTermMonths=True), "subscriptionTermMonths"),
        (lambda body: body.update(startDate="2027-02-30"), "startDate"),
    ],
)
def test_a_body_that_breaks_the_contract_is_refused_naming_the_field(change, field):
    body = snapshot().to_json()
    change(body)
    with pytest.raises(SnapshotError, match=field):
        QuoteSnapshot.from_json(body)
