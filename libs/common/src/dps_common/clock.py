"""The time every service reads: one function, passed to what needs it so tests can move it."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)
