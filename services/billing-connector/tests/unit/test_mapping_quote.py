"""The mapping's draft quote: description, dates, metadata; and the refusals found while planning
(limits, a quote not approved, a bad currency or term), before anything is created."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pytest

from dps_billing.domain import limits
from dps_billing.domain.mapping import plan_push
from dps_billing.domain.notices import NoticeCode
from dps_billing.domain.quote_snapshot import PriceModel, QuoteSnapshot, QuoteSnapshotLine, QuoteStatus

LineFactory = Callable[..., QuoteSnapshotLine]
QuoteFactory = Callable[..., QuoteSnapshot]


def _ts(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp())


def test_the_draft_quote(make_quote: QuoteFactory, now: datetime) -> None:
    quote = make_quote()
    plan = plan_push(quote, now)
    assert plan.quote is not None
    assert plan.quote.description == "Acme renewal 2026"
    assert plan.quote.expires_at == _ts(2026, 3, 31, 23, 59, 59)
    assert plan.quote.effective_date == _ts(2026, 4, 1)
    assert plan.quote.subscription_metadata == {"service_subscription_terms_months": "12"}
    assert plan.quote.metadata == {
        "service_pricing_quote_id": "7a0c2b7e-1111-4c5e-9a53-2f3c4d5e6f70",
        "service_opportunity_crm_id": "006Dn00000ABCDE",
        "service_subscription_terms_months": "12",
        "service_billing_frequency": "MONTHLY",
        "service_billing_period_months": "1",
        "service_target_currency": "USD",
        "service_start_date": "2026-04-01",
    }


def test_optional_metadata_is_left_out(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(opportunity_crm_id=None, opportunity_id=None, start_date=None), now)
    assert plan.quote is not None
    assert "service_opportunity_crm_id" not in plan.quote.metadata
    assert "service_start_date" not in plan.quote.metadata
    assert plan.quote.effective_date is None


def test_a_past_start_date_is_not_an_effective_date(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(start_date=date(2026, 1, 1)), now)
    assert plan.quote is not None and plan.quote.effective_date is None
    assert plan.quote.metadata["service_start_date"] == "2026-01-01"
    today = plan_push(make_quote(start_date=now.date()), now)
    assert today.quote is not None and today.quote.effective_date is None


def test_a_future_start_date_is_the_effective_date(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(start_date=date(2026, 6, 15), end_date=date(2026, 6, 1)), now)
    assert plan.quote is not None and plan.quote.effective_date == _ts(2026, 6, 15)


def test_the_end_date_is_the_expiry(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(end_date=date(2026, 5, 2)), now)
    assert plan.quote is not None and plan.quote.expires_at == _ts(2026, 5, 2, 23, 59, 59)
    assert plan.warnings == ()


def test_without_an_end_date_the_fallback_expiry(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(end_date=None), now)
    assert plan.quote is not None and plan.quote.expires_at == int((now + timedelta(days=30)).timestamp())
    assert plan.warnings == ()


def test_a_past_end_date_falls_back_with_a_warning(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(end_date=date(2026, 3, 1)), now)
    assert plan.quote is not None and plan.quote.expires_at == int((now + timedelta(days=30)).timestamp())
    assert plan.quote.expires_at > now.timestamp()
    assert [w.code for w in plan.warnings] == [NoticeCode.END_DATE_PASSED]
    assert not plan.blocked


def test_a_long_name_is_cut_to_500_characters(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(name="Q" * 501), now)
    assert plan.quote is not None and plan.quote.description == "Q" * 500
    assert [w.code for w in plan.warnings] == [NoticeCode.DESCRIPTION_TRUNCATED]
    exact = plan_push(make_quote(name="Q" * 500), now)
    assert exact.quote is not None and exact.quote.description == "Q" * 500 and exact.warnings == ()


@pytest.mark.parametrize("status", [QuoteStatus.DRAFT, QuoteStatus.PENDING_APPROVAL, QuoteStatus.REJECTED])
def test_only_an_approved_quote_is_pushed(make_quote: QuoteFactory, now: datetime, status: QuoteStatus) -> None:
    plan = plan_push(make_quote(status=status), now)
    assert plan.blocked and plan.quote is None and plan.lines == ()
    assert [e.code for e in plan.errors] == [NoticeCode.QUOTE_NOT_APPROVED]


@pytest.mark.parametrize("currency", ["", "US", "USDX", "U$D"])
def test_a_currency_that_is_no_code_is_an_error(make_quote: QuoteFactory, now: datetime, currency: str) -> None:
    plan = plan_push(make_quote(currency=currency), now)
    assert plan.blocked and [e.code for e in plan.errors] == [NoticeCode.INVALID_CURRENCY]


def test_a_term_under_one_month_is_an_error(make_quote: QuoteFactory, now: datetime) -> None:
    plan = plan_push(make_quote(subscription_term_months=0), now)
    assert plan.blocked and [e.code for e in plan.errors] == [NoticeCode.INVALID_TERM]


def test_twenty_line_items_are_accepted(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    lines = tuple(make_line() for _ in range(20)) + (make_line(price_model=PriceModel.TIERED),)
    plan = plan_push(make_quote(lines=lines), now)
    assert not plan.blocked and len(plan.lines) == 20
    assert plan.quote is not None and len(plan.quote.line_items) == 20


def test_twenty_one_line_items_are_refused(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    plan = plan_push(make_quote(lines=tuple(make_line() for _ in range(21))), now)
    assert plan.blocked and plan.lines == () and plan.quote is None
    assert [(e.code, e.limit) for e in plan.errors] == [(NoticeCode.LIMIT_EXCEEDED, "quote.line_items")]
    assert "21" in plan.errors[0].message and "20" in plan.errors[0].message


def test_a_metadata_value_over_500_characters_is_refused(make_quote: QuoteFactory, make_line: LineFactory,
                                                         now: datetime) -> None:
    plan = plan_push(make_quote(opportunity_crm_id="x" * 501), now)
    assert [(e.code, e.limit) for e in plan.errors] == [(NoticeCode.LIMIT_EXCEEDED, "metadata.value_length")]
    assert "service_opportunity_crm_id" in plan.errors[0].message
    assert not plan_push(make_quote(opportunity_crm_id="x" * 500), now).blocked
    line = make_line(product_spec_id="S" * 501, custom_name="Named")
    plan = plan_push(make_quote(lines=(line,)), now)
    assert [(e.code, e.limit, e.line_id) for e in plan.errors] == [
        (NoticeCode.LIMIT_EXCEEDED, "metadata.value_length", str(line.id))]


def test_a_product_name_over_5000_characters_is_refused(make_quote: QuoteFactory, make_line: LineFactory,
                                                        now: datetime) -> None:
    line = make_line(custom_name="N" * 5001)
    plan = plan_push(make_quote(lines=(line,)), now)
    assert [(e.code, e.limit, e.line_id) for e in plan.errors] == [
        (NoticeCode.LIMIT_EXCEEDED, "product.name", str(line.id))]
    assert not plan_push(make_quote(lines=(make_line(custom_name="N" * 5000),)), now).blocked


def test_every_problem_is_reported_at_once(make_quote: QuoteFactory, make_line: LineFactory, now: datetime) -> None:
    lines = tuple(make_line() for _ in range(21))
    plan = plan_push(make_quote(status=QuoteStatus.DRAFT, opportunity_crm_id="x" * 501, lines=lines), now)
    assert {e.code for e in plan.errors} == {NoticeCode.QUOTE_NOT_APPROVED, NoticeCode.LIMIT_EXCEEDED}
    assert {e.limit for e in plan.errors} == {None, "quote.line_items", "metadata.value_length"}


def test_metadata_limits() -> None:
    assert limits.metadata_problems("quote", {f"k{i}": "v" for i in range(50)}) == []
    [too_many] = limits.metadata_problems("quote", {f"k{i}": "v" for i in range(51)})
    assert too_many.limit == "metadata.keys" and "51" in too_many.message
    assert limits.metadata_problems("quote", {"k" * 40: "v"}) == []
    [long_key] = limits.metadata_problems("quote", {"k" * 41: "v"})
    assert long_key.limit == "metadata.key_length"
    [bracket] = limits.metadata_problems("product", {"a[b]": "v"}, line_id="L1")
    assert bracket.limit == "metadata.key_length" and bracket.line_id == "L1"


def test_all_recurring_prices_at_one_interval() -> None:
    assert limits.interval_problems([("month", 3), ("month", 3)]) == []
    assert limits.interval_problems([]) == []
    [mixed] = limits.interval_problems([("month", 1), ("year", 1)])
    assert mixed.limit == "quote.interval" and "every 1 month" in mixed.message and "every 1 year" in mixed.message
    [too_long] = limits.interval_problems([("year", 4)])
    assert too_long.limit == "price.recurring"
    assert limits.interval_problems([("month", 36)]) == []
