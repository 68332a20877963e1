"""A worker's attempt slots, shared by its delivery loop and its consumer.

A slot is taken when the loop reserves room for a claim or the consumer for a hand-over, counted as
running while an attempt thread works on it, and given back when the reservation goes unused or the
attempt's result is taken for recording.
"""

from __future__ import annotations

import threading


class Slots:
    """Attempts taken on and not yet recorded, counted for the loop and the consumer together."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._taken = 0  # reserved (for a claim or a hand-over) or started, and not yet done
        self._running = 0  # being attempted (on a thread) and not yet done
        self._closed = False

    @property
    def taken(self) -> int:
        return self._taken

    def take(self, wanted: int, up_to: int) -> int:
        """Take at most ``wanted`` while no more than ``up_to`` are taken in all; how many were."""
        with self._changed:
            granted = 0 if self._closed else max(0, min(wanted, up_to - self._taken))
            self._taken += granted
            return granted

    @property
    def running(self) -> int:
        return self._running

    def give_back(self, count: int) -> None:
        """Reserved and not started after all."""
        with self._changed:
            self._taken -= count
            self._changed.notify_all()

    def start(self, count: int) -> None:
        with self._changed:
            self._running += count

    def finish(self, count: int) -> None:
        """Started, and now done."""
        with self._changed:
            self._taken -= count
            self._running -= count
            self._changed.notify_all()

    def wait_for_room(self, count: int, up_to: int, timeout: float) -> bool:
        """Until ``count`` could be taken under ``up_to``, at most ``timeout`` seconds; whether there
        is room (or nothing more will be taken on)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._closed or up_to - self._taken >= min(count, up_to), timeout)

    def close(self) -> None:
        """Stopping: nothing more is taken on."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
