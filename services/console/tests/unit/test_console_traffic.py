"""An endpoint's traffic chart and figures in words (``domain.traffic``), and the recovery form's times
and answer in words (``domain.recovery``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dps_console.domain.recovery import field_value, form_time, recovered_words, rfc3339
from dps_console.domain.traffic import (
    HEIGHT,
    LEFT,
    TOP,
    Hour,
    chart,
    duration_words,
    scale_top,
    time_to_success_words,
    window_of,
)

START = datetime(2027, 1, 1, 0, 0, tzinfo=UTC)


def hours(counts: list[tuple[int, int]]) -> list[Hour]:
    return [Hour(START + timedelta(hours=i), ok, bad) for i, (ok, bad) in enumerate(counts)]


def test_the_scale_is_a_round_number_at_or_above_the_busiest_hour():
    assert [scale_top(n) for n in (0, 1, 2, 3, 5, 6, 11, 20, 21, 99, 101, 4999)] == [
        1, 1, 2, 5, 5, 10, 20, 20, 50, 100, 200, 5000]


def test_bars_stack_failed_on_succeeded_and_are_to_scale():
    drawn = chart(hours([(0, 0)] * 10 + [(6, 4)] + [(0, 0)] * 13))
    assert drawn.top == 10 and len(drawn.bars) == 24
    busiest = drawn.bars[10]
    plot_bottom = drawn.plot_bottom
    assert busiest.succeeded_y + busiest.succeeded_height == plot_bottom  # standing on the axis
    assert busiest.failed_y + busiest.failed_height == busiest.succeeded_y  # failed on top of succeeded
    assert busiest.succeeded_height == round(0.6 * (plot_bottom - TOP), 2)
    assert busiest.failed_y == TOP  # 10 of 10: the top of the plot
    assert drawn.bars[0].succeeded_height == drawn.bars[0].failed_height == 0
    assert all(b.x >= LEFT and b.x + b.width <= drawn.plot_right for b in drawn.bars)
    assert busiest.label == "2027-01-01 10:00-11:00 UTC: 6 succeeded, 4 failed"
    assert [t.label for t in drawn.y_ticks] == ["0", "5", "10"]
    assert [t.label for t in drawn.x_ticks] == ["00:00", "06:00", "12:00", "18:00"]


def test_a_week_is_labelled_by_day_and_an_empty_one_still_draws():
    week = chart(hours([(0, 0)] * 168))
    assert len(week.bars) == 168 and week.top == 1 and week.height == HEIGHT
    assert [t.label for t in week.x_ticks][:2] == ["Fri 01 Jan", "Sat 02 Jan"] and len(week.x_ticks) == 7


def test_the_window_asked_for_in_the_address_or_24_hours():
    assert [window_of(w) for w in ("24h", "7d", None, "30d", "<b>")] == ["24h", "7d", "24h", "24h", "24h"]


def test_durations_and_time_to_success_in_words():
    assert [duration_words(v) for v in (0, 85, 999, 1000, 1234, 59_900, 60_000, 200_000, 7_500_000)] == [
        "0 ms", "85 ms", "999 ms", "1 s", "1.2 s", "59.9 s", "1 min", "3 min 20 s", "2 h 5 min"]
    assert time_to_success_words(None, None) == "No delivery succeeded in this time."
    assert time_to_success_words(1234, 45_000) == (
        "Half of the deliveries that succeeded did so within 1.2 s of the event, and 95 in 100 within 45 s.")


def test_the_recovery_forms_times_are_utc():
    assert form_time("2027-01-02T10:00") == datetime(2027, 1, 2, 10, 0, tzinfo=UTC)
    assert form_time(" 2027-01-02T10:00:05 ") == datetime(2027, 1, 2, 10, 0, 5, tzinfo=UTC)
    assert form_time("2027-01-02T11:00:00+01:00") == datetime(2027, 1, 2, 10, 0, tzinfo=UTC)
    assert [form_time(v) for v in ("", "yesterday", "2027-13-01T00:00")] == [None, None, None]
    moment = datetime(2027, 1, 2, 10, 0, 5, tzinfo=UTC)
    assert (rfc3339(moment), field_value(moment)) == ("2027-01-02T10:00:05Z", "2027-01-02T10:00:05")


def test_what_a_recovery_did_in_words():
    assert recovered_words(12, False).startswith("12 deliveries will be sent again, oldest first")
    assert recovered_words(1, False).startswith("1 delivery will be sent again")
    assert "More failed deliveries remain" in recovered_words(1000, True) and "1,000 deliveries" in recovered_words(1000, True)
    assert recovered_words(0, False).startswith("No failed delivery to send again")
