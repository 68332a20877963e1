"""The plain rules behind recover and stats: the recovery window (within the history, nothing in the
future, since first; in UTC), the spread of a recovery's due times, and the stats windows' hours."""

import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from dps_common.errors import ValidationFailed

from dps_webhooks.domain.recovery import recovery_window, spread
from dps_webhooks.domain.traffic_stats import HourCount, TrafficStats, TrafficWindow, traffic_window

NOW = datetime(2026, 11, 28, 17, 42, 13, 500_000, tzinfo=UTC)
HISTORY = timedelta(days=30)


def test_the_window_defaults_to_now_and_is_given_in_utc():
    since = datetime(2026, 11, 28, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert recovery_window(since, None, now=NOW, history=HISTORY) == (datetime(2026, 11, 28, 10, 0, tzinfo=UTC), NOW)
    assert recovery_window(NOW - HISTORY, NOW, now=NOW, history=HISTORY) == (NOW - HISTORY, NOW)  # both edges held


@pytest.mark.parametrize(
    ("since", "until", "field"),
    [
        (NOW - HISTORY - timedelta(seconds=1), None, "since"),
        (NOW - timedelta(hours=1), NOW + timedelta(seconds=1), "until"),
        (NOW + timedelta(seconds=1), None, "since"),
        (NOW - timedelta(hours=1), NOW - timedelta(hours=2), "since"),
        (NOW - timedelta(hours=1), NOW - timedelta(hours=1), "since"),
        (NOW - timedelta(days=40), NOW - timedelta(days=35), "since"),
    ],
)
def test_a_window_outside_the_history_or_backwards_names_the_field(since, until, field):
    with pytest.raises(ValidationFailed) as refused:
        recovery_window(since, until, now=NOW, history=HISTORY)
    assert refused.value.extra["errors"][0]["field"] == field


def test_a_spread_is_per_second_from_now_or_one_step_after_the_last():
    assert spread(4, 20) == [0.0, 0.05, 0.1, 0.15000000000000002]
    assert spread(3, 4, after=10.0) == [10.25, 10.5, 10.75]
    assert spread(2, 20, after=0.0) == [0.05, 0.1]  # one due exactly now: the next waits its step
    assert spread(0, 20) == []


def test_the_windows_end_with_the_current_hour():
    day, week = traffic_window("24h", NOW), traffic_window("7d", NOW)
    assert (day.start, day.last_hour, day.until) == (datetime(2026, 11, 27, 18, tzinfo=UTC), datetime(2026, 11, 28, 17, tzinfo=UTC), NOW)
    assert week.start == datetime(2026, 11, 21, 18, tzinfo=UTC) and week.last_hour == day.last_hour


def test_totals_are_the_hours_sums():
    window = TrafficWindow("24h", NOW, NOW)
    stats = TrafficStats(uuid.uuid4(), window, (HourCount(NOW, 3, 1), HourCount(NOW, 0, 4)), None, None)
    assert (stats.succeeded, stats.failed) == (3, 5)
