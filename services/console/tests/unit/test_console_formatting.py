"""How pages write times, counts and a delivery's progress (``resources.formatting``)."""

from __future__ import annotations

from datetime import UTC, datetime

from dps_console.resources.formatting import counted, delivery_progress, moment_html, relative, type_anchor

NOW = datetime(2026, 11, 28, 12, 41, 30, tzinfo=UTC)


def test_a_time_is_shown_to_the_second_in_utc_with_how_long_ago():
    shown = moment_html("2026-11-28T13:41:05.123456+01:00", NOW)
    assert shown == ('<time datetime="2026-11-28T12:41:05Z">2026-11-28 12:41:05 UTC</time> '
                     '<span class="ago">(24 s ago)</span>')
    assert moment_html(None, NOW) == "never" and moment_html("", NOW, never="none yet") == "none yet"
    assert moment_html("<script>", NOW) == "never"


def test_how_long_ago_or_how_soon_in_whole_units():
    def at(seconds: int) -> str:
        return relative(datetime.fromtimestamp(NOW.timestamp() - seconds, UTC), NOW)

    assert [at(0), at(1), at(59), at(60), at(3599), at(7200), at(86400 * 3)] == [
        "just now", "1 s ago", "59 s ago", "1 min ago", "59 min ago", "2 h ago", "3 days ago"]
    assert [at(-30), at(-90)] == ["in 30 s", "in 1 min"]


def test_counts_agree_with_their_nouns():
    assert [counted(0, "product"), counted(1, "product"), counted(2, "price"), counted(1, "line")] == [
        "0 products", "1 product", "2 prices", "1 line"]


def test_failed_means_retries_remain_and_exhausted_means_given_up():
    failed = {"status": "FAILED", "attemptCount": 3, "nextAttemptAt": "2026-11-28T12:43:30Z"}
    assert delivery_progress(failed, NOW) == (
        'Failed, retries remain: 3 of 8 attempts made. The next attempt goes at '
        '<time datetime="2026-11-28T12:43:30Z">2026-11-28 12:43:30 UTC</time> <span class="ago">(in 2 min)</span>.')
    held = {"status": "FAILED", "attemptCount": 1, "nextAttemptAt": None}
    assert "held while the endpoint is paused or disabled" in delivery_progress(held, NOW)
    assert delivery_progress({"status": "EXHAUSTED", "attemptCount": 8}, NOW).startswith("Given up after 8 attempts")
    assert "over 1 MB" in delivery_progress({"status": "EXHAUSTED", "attemptCount": 0}, NOW)
    assert delivery_progress({"status": "PENDING", "attemptCount": 1}, NOW) == "Attempt 1 of 8 is under way."
    assert delivery_progress({"status": "SUCCESS", "attemptCount": 2}, NOW) == "Delivered on attempt 2 of 8."


def test_an_event_types_anchor_is_a_plain_id():
    assert type_anchor("quote.approved") == "type-quote-approved"
    assert type_anchor('a"b <c>') == "type-a-b--c-"
