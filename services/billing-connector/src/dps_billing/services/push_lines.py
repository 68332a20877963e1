"""A push's lines, a few at a time: each line's product then its price, with up to ``LINES_IN_FLIGHT``
lines under way at once.

Each call waits on the platform's latency. One call at a time, a push makes at most 1 / latency calls
per second, below an account's rate as soon as a call takes longer than the pacer's interval (50 ms at
20 calls/s; Stripe's creates take longer). With a few lines in flight one push can use the account's
whole rate, and the pacer still keeps the account under it, however many calls wait for a turn.

The calls still reach the platform in line order per kind: a line takes its product's (or price's)
first pacer turn only after the line before it took its place in the pacer's order (or gave it up:
the object was stored already, or the line stopped). Turns start in that order, spaced by the pacer's
interval.

When a line fails, no line takes a new turn afterwards; lines already calling finish their call and
store its id. The failure of the earliest line is raised (as one call at a time would have).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Protocol, TypeVar, runtime_checkable

from dps_billing.adapters.billing_platform.pacing import Pacer, turn_of
from dps_billing.domain.plan import PlannedLine

LINES_IN_FLIGHT = 4
R = TypeVar("R")


@runtime_checkable
class TurnTaker(Protocol):
    def take_turn(self, account_id: str, reserved: Callable[[], None]) -> None:
        """Wait for a turn, calling ``reserved`` once it is taken (before sleeping until it)."""


class Aborted(Exception):
    """Another line of the push failed: this one takes no new turn."""


class TurnOrder:
    """The order in which the lines' calls of each kind take their first pacer turn: by position."""

    def __init__(self, pacer: Pacer):
        self._pacer = pacer
        self._next: dict[str, int] = {}  # per kind: the first position that has not passed yet
        self._passed: dict[str, set[int]] = {}  # per kind: positions passed out of order
        self._aborted = False
        self._changed = threading.Condition()

    def check(self) -> None:
        if self._aborted:
            raise Aborted()

    def abort(self) -> None:
        with self._changed:
            self._aborted = True
            self._changed.notify_all()

    @contextmanager
    def step(self, kind: str, position: int) -> Iterator[Pacer]:
        """The pacer for one line's call of ``kind`` (its retries and lookups included); its place in the
        order is given up when the step ends, if it never took a turn."""
        step = _Step(self, kind, position)
        try:
            yield step
        finally:
            step.passed()

    def _wait_for(self, kind: str, position: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._aborted or self._next.get(kind, 0) >= position)
            if self._aborted:
                raise Aborted()

    def _pass(self, kind: str, position: int) -> None:
        with self._changed:
            passed = self._passed.setdefault(kind, set())
            passed.add(position)
            following = self._next.get(kind, 0)
            while following in passed:
                passed.remove(following)
                following += 1
            self._next[kind] = following
            self._changed.notify_all()


class _Step:
    """The pacer one line's calls of a kind use: its first turn waits for its place in the order."""

    def __init__(self, order: TurnOrder, kind: str, position: int):
        self._order = order
        self._kind = kind
        self._position = position
        self._passed = False

    def passed(self) -> None:
        if not self._passed:
            self._passed = True
            self._order._pass(self._kind, self._position)

    def wait_turn(self, account_id: str) -> None:
        with self.turn(account_id):
            pass

    @contextmanager
    def turn(self, account_id: str, reserved: Callable[[], None] | None = None) -> Iterator[None]:
        pacer = self._order._pacer
        if self._passed:  # a retry or a second lookup page: its place is taken already
            with turn_of(pacer, account_id, reserved):
                yield
            return
        try:
            self._order._wait_for(self._kind, self._position)
        except Aborted:
            self.passed()
            raise

        def placed() -> None:
            self.passed()
            if reserved is not None:
                reserved()

        if getattr(pacer, "turn", None) is not None or not isinstance(pacer, TurnTaker):
            with turn_of(pacer, account_id, placed):
                yield
            return
        pacer.take_turn(account_id, placed)  # a pacer that takes turns but cannot say when the call ended
        yield


def create_lines(lines: Sequence[PlannedLine], pacer: Pacer,
                 run_line: Callable[[int, PlannedLine, TurnOrder], R]) -> list[R]:
    """``run_line(position, line, order)`` for every line, up to ``LINES_IN_FLIGHT`` at once; their
    results in line order, or the earliest line's failure."""
    order = TurnOrder(pacer)

    def one(position: int, line: PlannedLine) -> R:
        try:
            order.check()  # a line before this one failed: start nothing
            return run_line(position, line, order)
        except BaseException:
            order.abort()
            raise

    with ThreadPoolExecutor(LINES_IN_FLIGHT, thread_name_prefix="billing-line") as pool:
        # each line in a copy of the caller's context: the push's bound request id goes with it
        futures = [pool.submit(contextvars.copy_context().run, one, position, line) for position, line in enumerate(lines)]
    failures = [error for error in (f.exception() for f in futures) if error is not None]
    first = next((e for e in failures if not isinstance(e, Aborted)), failures[0] if failures else None)
    if first is not None:
        raise first
    return [f.result() for f in futures]
