"""The draft quote's expiry and the subscription's effective date."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from dps_billing.domain.expiry import (
    DEFAULT_EXPIRY,
    add_months,
    effective_date,
    end_of_day,
    quote_expiry,
    start_of_day,
    unix,
)

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("day", "months", "expected"), [
    (date(2026, 1, 31), 1, date(2026, 2, 28)),
    (date(2028, 1, 31), 1, date(2028, 2, 29)),
    (date(2026, 11, 15), 2, date(2027, 1, 15)),
    (date(2026, 3, 10), 12, date(2027, 3, 10)),
    (date(2026, 3, 31), 36, date(2029, 3, 31)),
    (date(2026, 5, 31), 1, date(2026, 6, 30)),
])
def test_add_months(day: date, months: int, expected: date) -> None:
    assert add_months(day, months) == expected


def test_a_day_ends_at_235959_utc() -> None:
    assert end_of_day(date(2026, 3, 31)) == datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC)
    assert start_of_day(date(2026, 3, 31)) == datetime(2026, 3, 31, tzinfo=UTC)


def test_the_end_date_when_it_lies_ahead() -> None:
    assert quote_expiry(date(2026, 3, 31), None, 12, NOW) == (unix(datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC)),
                                                              False)


def test_an_end_date_of_today_is_used_while_its_end_is_an_hour_away() -> None:
    expires, passed = quote_expiry(date(2026, 3, 10), None, 12, NOW)
    assert (expires, passed) == (unix(end_of_day(date(2026, 3, 10))), False)
    late = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)
    expires, passed = quote_expiry(date(2026, 3, 10), None, 12, late)
    assert (expires, passed) == (unix(late + DEFAULT_EXPIRY), True)


def test_a_past_end_date_falls_back_to_30_days() -> None:
    assert quote_expiry(date(2026, 2, 1), None, 12, NOW) == (unix(NOW + timedelta(days=30)), True)


def test_no_end_date_falls_back_to_30_days() -> None:
    assert quote_expiry(None, date(2026, 4, 1), 12, NOW) == (unix(NOW + timedelta(days=30)), False)


def test_the_fallback_is_capped_by_the_end_of_the_term() -> None:
    # a one-month term that began on 20 February ends on 20 March, before now + 30 days
    expires, _ = quote_expiry(None, date(2026, 2, 20), 1, NOW)
    assert expires == unix(end_of_day(date(2026, 3, 20)))
    # without a start date the term runs from today
    expires, _ = quote_expiry(None, None, 1, datetime(2026, 2, 1, 12, tzinfo=UTC))
    assert expires == unix(end_of_day(date(2026, 3, 1)))


def test_a_term_already_over_does_not_cap_the_fallback_into_the_past() -> None:
    expires, _ = quote_expiry(None, date(2025, 1, 1), 12, NOW)
    assert expires == unix(NOW + timedelta(days=30))


@pytest.mark.parametrize("end_date", [None, date(2020, 1, 1), date(2026, 3, 10), date(2026, 3, 11), date(2030, 1, 1)])
@pytest.mark.parametrize("start_date", [None, date(2020, 1, 1), date(2026, 3, 9), date(2026, 3, 10), date(2027, 1, 1)])
@pytest.mark.parametrize("term", [1, 12, 36])
def test_the_expiry_always_lies_ahead(end_date: date | None, start_date: date | None, term: int) -> None:
    for now in (NOW, datetime(2026, 3, 10, 23, 59, 59, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC)):
        expires, _ = quote_expiry(end_date, start_date, term, now)
        assert expires > unix(now)


def test_effective_date_only_in_the_future() -> None:
    assert effective_date(date(2026, 4, 1), NOW) == unix(datetime(2026, 4, 1, tzinfo=UTC))
    assert effective_date(date(2026, 3, 11), NOW) == unix(datetime(2026, 3, 11, tzinfo=UTC))
    assert effective_date(date(2026, 3, 10), NOW) is None  # today began before now
    assert effective_date(date(2026, 1, 1), NOW) is None
    assert effective_date(None, NOW) is None


def test_now_must_be_aware() -> None:
    with pytest.raises(ValueError):
        quote_expiry(None, None, 12, datetime(2026, 3, 10, 12))
    with pytest.raises(ValueError):
        effective_date(date(2026, 4, 1), datetime(2026, 3, 10, 12))
