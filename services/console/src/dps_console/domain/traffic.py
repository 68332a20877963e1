"""An endpoint's traffic as the endpoint page draws it: the dispatcher's attempts per hour (succeeded
and failed, ``GET /webhook-configs/{id}/stats``) laid out as stacked bars of an SVG chart, on the
server (no script), and its figures in words. Pure geometry and words: the template writes the SVG."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

WINDOWS = {"24h": "the last 24 hours", "7d": "the last 7 days"}
DEFAULT_WINDOW = "24h"

# the drawing's coordinates (its viewBox); the stylesheet scales it to the page's width
WIDTH, HEIGHT = 720.0, 220.0
LEFT, RIGHT, TOP, BOTTOM = 44.0, 8.0, 12.0, 30.0
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM


@dataclass(frozen=True)
class Hour:
    start: datetime  # UTC, on the hour
    succeeded: int
    failed: int


@dataclass(frozen=True)
class Bar:
    hour: Hour
    x: float
    width: float
    succeeded_y: float
    succeeded_height: float
    failed_y: float
    failed_height: float
    label: str  # "2027-01-01 10:00-11:00 UTC: 12 succeeded, 1 failed" (the bar's tooltip)


@dataclass(frozen=True)
class Tick:
    at: float  # y of a horizontal grid line, or x of a time label
    label: str


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    top: int  # the scale's highest value
    width: float = WIDTH
    height: float = HEIGHT
    left: float = LEFT
    plot_top: float = TOP
    plot_bottom: float = TOP + PLOT_HEIGHT
    plot_right: float = LEFT + PLOT_WIDTH


def window_of(value: str | None) -> str:
    """The window asked for in the page's address; anything else is the default (24 hours)."""
    return value if value in WINDOWS else DEFAULT_WINDOW


def scale_top(highest: int) -> int:
    """The smallest 1, 2 or 5 times a power of ten at or above ``highest`` (at least 1): round grid lines."""
    top = 1
    while True:
        for step in (1, 2, 5):
            if top * step >= highest:
                return top * step
        top *= 10


def chart(hours: Sequence[Hour]) -> Chart:
    """Stacked bars, one per hour, oldest left: succeeded at the bottom, failed above."""
    top = scale_top(max((h.succeeded + h.failed for h in hours), default=0))
    slot = PLOT_WIDTH / max(len(hours), 1)
    gap = min(2.0, slot * 0.2)
    bottom = TOP + PLOT_HEIGHT

    def height(count: int) -> float:
        return round(PLOT_HEIGHT * count / top, 2)

    bars = []
    for i, hour in enumerate(hours):
        ok, bad = height(hour.succeeded), height(hour.failed)
        bars.append(Bar(hour, round(LEFT + i * slot + gap / 2, 2), round(slot - gap, 2), round(bottom - ok, 2), ok,
                        round(bottom - ok - bad, 2), bad, hour_words(hour)))
    y_ticks = [Tick(round(bottom - PLOT_HEIGHT * value / top, 2), str(value))
               for value in sorted({0, top // 2, top})]
    every = 6 if len(hours) <= 48 else 24  # a label each 6 hours over a day, each day over a week
    x_ticks = [Tick(round(LEFT + i * slot, 2), _time_label(h.start, daily=every == 24))
               for i, h in enumerate(hours) if h.start.hour % every == 0]
    return Chart(bars, y_ticks, x_ticks, top)


def hour_words(hour: Hour) -> str:
    end = (hour.start.hour + 1) % 24
    return (f"{hour.start:%Y-%m-%d %H}:00-{end:02d}:00 UTC: {hour.succeeded} succeeded, {hour.failed} failed")


def _time_label(start: datetime, *, daily: bool) -> str:
    return f"{start:%a %d %b}" if daily else f"{start:%H}:00"


def duration_words(ms: int | float | None) -> str:
    """``85 ms``, ``1.2 s``, ``3 min 20 s``, ``2 h 5 min``."""
    if ms is None:
        return "unknown"
    if ms < 1000:
        return f"{int(ms)} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    whole = int(seconds)
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min" + (f" {rest} s" if rest else "")
    hours, rest = divmod(whole // 60, 60)
    return f"{hours} h" + (f" {rest} min" if rest else "")


def time_to_success_words(p50: int | None, p95: int | None) -> str:
    """The p50 and p95 of the time from a delivery's creation to its successful attempt, as a person says it."""
    if p50 is None:
        return "No delivery succeeded in this time."
    said = f"Half of the deliveries that succeeded did so within {duration_words(p50)} of the event"
    if p95 is None:
        return said + "."
    return said + f", and 95 in 100 within {duration_words(p95)}."
