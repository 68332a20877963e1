"""When the draft quote expires, and when its subscription takes effect, as unix seconds.

Dates are calendar dates without a zone; they are read in UTC (a date's end is 23:59:59 UTC).

Expiry: the end of the quote's end date when that lies at least ``MIN_LEAD`` ahead (the platform
refuses a past ``expires_at``, and the call may be retried a little later). Otherwise (no end date,
or one that has passed) a fallback: ``now`` + 30 days, the platform's own default quote expiry,
capped by the end of the subscription term (start date, or today without one, + the term in months)
when that end still lies ``MIN_LEAD`` ahead. Either way the expiry lies in the future.
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, time, timedelta

DEFAULT_EXPIRY = timedelta(days=30)
MIN_LEAD = timedelta(hours=1)


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime")


def start_of_day(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def end_of_day(day: date) -> datetime:
    return start_of_day(day) + timedelta(days=1, seconds=-1)


def add_months(day: date, months: int) -> date:
    """``day`` moved ``months`` calendar months on, on the month's last day when it is shorter."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def unix(moment: datetime) -> int:
    return int(moment.timestamp())


def quote_expiry(end_date: date | None, start_date: date | None, term_months: int, now: datetime) -> tuple[int, bool]:
    """(expires_at, whether an end date was given but had passed, so the fallback was used)."""
    _require_aware(now)
    earliest = now + MIN_LEAD
    if end_date is not None and end_of_day(end_date) >= earliest:
        return unix(end_of_day(end_date)), False
    expiry = now + DEFAULT_EXPIRY
    term_end = end_of_day(add_months(start_date or now.astimezone(UTC).date(), term_months))
    if earliest <= term_end < expiry:
        expiry = term_end
    return unix(expiry), end_date is not None


def effective_date(start_date: date | None, now: datetime) -> int | None:
    """The start date's beginning when it lies in the future; otherwise None (the platform refuses a
    past effective date, and a subscription without one starts on acceptance)."""
    _require_aware(now)
    if start_date is None or start_of_day(start_date) <= now:
        return None
    return unix(start_of_day(start_date))
