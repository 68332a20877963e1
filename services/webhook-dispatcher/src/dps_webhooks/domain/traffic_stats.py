"""An endpoint's traffic over a window (``GET /webhook-configs/{id}/stats``): the windows offered, the
hours they cover and the figures, as plain values. ``db/endpoint_stats.py`` counts them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

# each window by name: how many hours, the current (partial) one last
WINDOWS = {"24h": 24, "7d": 7 * 24}
DEFAULT_WINDOW = "24h"
HOUR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class HourCount:
    start: datetime  # an hour boundary (UTC)
    succeeded: int  # attempts answered 2xx in time
    failed: int  # every other attempt: another status, a timeout, a refused connection...


@dataclass(frozen=True, slots=True)
class TrafficWindow:
    name: str
    start: datetime  # the first hour's boundary
    until: datetime  # now: the last hour is still running

    @property
    def last_hour(self) -> datetime:
        return self.until.replace(minute=0, second=0, microsecond=0)


def traffic_window(name: str, now: datetime) -> TrafficWindow:
    """The window ``name`` (one of ``WINDOWS``) ending ``now``: its hours, the current one included."""
    last_hour = now.replace(minute=0, second=0, microsecond=0)
    return TrafficWindow(name, last_hour - (WINDOWS[name] - 1) * HOUR, now)


@dataclass(frozen=True, slots=True)
class TrafficStats:
    endpoint_id: UUID
    window: TrafficWindow
    hours: tuple[HourCount, ...]  # every hour of the window, oldest first, zeros included
    p50_ms: int | None  # time from a delivery's creation to its successful attempt's answer; None: no success
    p95_ms: int | None

    @property
    def succeeded(self) -> int:
        return sum(hour.succeeded for hour in self.hours)

    @property
    def failed(self) -> int:
        return sum(hour.failed for hour in self.hours)
