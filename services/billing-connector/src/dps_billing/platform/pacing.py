"""Pacing: every call to the platform waits for its turn first, so that one account's calls stay
under the platform's rate limit however many workers make them.

The service implements ``Pacer`` over a shared store; ``IntervalPacer`` is the in-process one (one
process, tests)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol


class Pacer(Protocol):
    def wait_turn(self, account_id: str) -> None:
        """Return when a call for ``account_id`` may be made."""


class NoPacing:
    def wait_turn(self, account_id: str) -> None:
        return None


class IntervalPacer:
    """At most ``per_second`` calls per account per second, spaced evenly, in this process."""

    def __init__(self, per_second: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self._interval = 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait_turn(self, account_id: str) -> None:
        with self._lock:
            now = self._clock()
            turn = max(now, self._next.get(account_id, now))
            self._next[account_id] = turn + self._interval
        if turn > now:
            self._sleep(turn - now)
