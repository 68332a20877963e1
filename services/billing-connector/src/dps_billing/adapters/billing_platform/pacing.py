"""Pacing: every call to the platform takes a turn first, so that one account's calls stay under the
platform's rate limit however many workers make them.

A turn is entered when the call may start and left when it ended (answered, failed or gave up). The
platform counts a call when it receives it, somewhere between the two; so the promise "never more
than ``per_second`` calls in any one-second window, as the platform sees them" holds only if a call
starts a full second after the calls ``per_second`` turns before it *ended*: spacing starts evenly is
not enough (at exactly 1 / rate apart, rate + 1 calls fit in a closed second, and a call that reaches
the platform late, e.g. behind a connection's setup, crowds the ones after it).

The service implements ``Pacer`` over a shared store (``dps_billing.adapters.billing_platform.postgres_pacer``); ``IntervalPacer``
is the in-process one (one process, tests). ``turn_of`` also accepts a plain ``wait_turn`` pacer (test
doubles), whose turns end as they begin."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

WINDOW_SECONDS = 1.0


class Pacer(Protocol):
    def wait_turn(self, account_id: str) -> None:
        """Return when a call for ``account_id`` may be made (a turn that ends at once)."""


def calls_per_window(per_second: float) -> int:
    """The most calls one one-second window may hold at ``per_second``: at least one."""
    return max(1, math.floor(per_second + 1e-9))


@contextmanager
def turn_of(pacer: Pacer, account_id: str, reserved: Callable[[], None] | None = None) -> Iterator[None]:
    """The pacer's turn around one call: its ``turn`` when it has one, else ``wait_turn``."""
    turn = getattr(pacer, "turn", None)
    if turn is not None:
        with turn(account_id, reserved):
            yield
        return
    pacer.wait_turn(account_id)
    if reserved is not None:
        reserved()
    yield


class NoPacing:
    def wait_turn(self, account_id: str) -> None:
        return None


class IntervalPacer:
    """At most ``per_second`` calls per account in any one-second window, spaced evenly, in this
    process: a turn starts at its even slot, and not before a second after the turns one window's
    worth before it ended."""

    def __init__(self, per_second: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self._interval = 1.0 / per_second
        self._calls = calls_per_window(per_second)
        self._clock = clock
        self._sleep = sleep
        self._next: dict[str, float] = {}
        self._seq: dict[str, int] = {}
        self._ends: dict[str, dict[int, float | None]] = {}
        self._lock = threading.Condition()

    def wait_turn(self, account_id: str) -> None:
        with self.turn(account_id):
            pass

    def turn(self, account_id: str, reserved: Callable[[], None] | None = None) -> AbstractContextManager[None]:
        return self._turn(account_id, reserved)

    @contextmanager
    def _turn(self, account_id: str, reserved: Callable[[], None] | None) -> Iterator[None]:
        with self._lock:
            now = self._clock()
            slot = max(now, self._next.get(account_id, now))
            self._next[account_id] = slot + self._interval
            seq = self._seq.get(account_id, 0)
            self._seq[account_id] = seq + 1
            ends = self._ends.setdefault(account_id, {})
            ends[seq] = None
        try:
            if reserved is not None:
                reserved()
            if slot > now:
                self._sleep(slot - now)
            with self._lock:
                self._lock.wait_for(lambda: all(end is not None for s, end in ends.items() if s <= seq - self._calls))
                before = [end for s, end in ends.items() if s <= seq - self._calls and end is not None]
                start_after = max(before, default=-math.inf) + WINDOW_SECONDS
                now = self._clock()
            if start_after > now:
                self._sleep(start_after - now)
            yield
        finally:
            with self._lock:
                now = self._clock()
                ends[seq] = now
                for old in [s for s, end in ends.items() if end is not None and end < now - WINDOW_SECONDS
                            and s < seq]:
                    del ends[old]
                self._lock.notify_all()
