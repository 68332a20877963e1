"""A quote view is rendered once per write: the use case renders it for the event and the resource
for the response, and a 500-line rendering is not free."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from uuid import uuid4

from dps_api.domain.pricing import QuoteTotals
from dps_api.domain.quote_views import QuoteView
from dps_api.domain.vocabulary import BillingFrequency, QuoteStatus
from dps_api.schemas.quotes import render_quote


def view() -> QuoteView:
    zero = Decimal("0")
    now = datetime(2026, 11, 25, tzinfo=UTC)
    return QuoteView(
        id=uuid4(), organization_id=uuid4(), name="Q", opportunity_id=None, owner_user_id=uuid4(),
        status=QuoteStatus.DRAFT, currency="USD", billing_frequency=BillingFrequency.MONTHLY,
        subscription_term_months=12, start_date=None, end_date=None, pricebook_id=None, pricebook_version=None,
        totals=QuoteTotals(zero, zero, zero, zero, zero, False), line_count=0, created_at=now, updated_at=now,
        lines=(),
    )


def test_the_same_view_renders_to_the_same_dict_and_another_view_anew():
    first = view()
    rendered = render_quote(first)
    assert render_quote(first) is rendered
    renamed = replace(first, name="Other")
    assert render_quote(renamed) is not rendered and render_quote(renamed)["name"] == "Other"
    equal_but_new = replace(first)
    again = render_quote(equal_but_new)
    assert again == rendered and again is not rendered
