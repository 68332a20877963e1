"""Recovering an endpoint's outage (``POST /webhook-configs/{id}/recover``): the window's rules, the
spread of the new deliveries and what a call answers, as plain functions over plain values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dps_common.errors import invalid_field

MAX_PER_CALL = 1000  # exhausted deliveries recovered by one call; the next call continues


@dataclass(frozen=True, slots=True)
class Recovery:
    recovered: int  # new deliveries made by this call
    has_more: bool  # more exhausted deliveries wait in the window: call again
    since: datetime
    until: datetime


def recovery_window(
    since: datetime, until: datetime | None, *, now: datetime, history: timedelta
) -> tuple[datetime, datetime]:
    """``[since, until)`` in UTC (``until`` defaults to ``now``), refused (400 naming the field) unless
    both lie within the delivery history (``history`` back from ``now``, nothing in the future) and
    ``since`` comes first."""
    until = now if until is None else until
    oldest = now - history
    for name, moment in (("since", since), ("until", until)):
        if moment < oldest:
            raise invalid_field(name, f"must be within the delivery history: not before {_rfc3339(oldest)}")
        if moment > now:
            raise invalid_field(name, "must not be in the future")
    if since >= until:
        raise invalid_field("since", "must be before until")
    return since.astimezone(UTC), until.astimezone(UTC)


def spread(count: int, per_second: float, *, after: float | None = None) -> list[float]:
    """When each of ``count`` new deliveries falls due, in seconds from now: ``per_second`` of them a
    second, the first at once or, when an earlier spread still runs until ``after``, one step after it
    (so the receiver is not handed a thousand due deliveries at one moment)."""
    step = 1.0 / per_second
    start = 0.0 if after is None else after + step
    return [start + i * step for i in range(count)]


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
