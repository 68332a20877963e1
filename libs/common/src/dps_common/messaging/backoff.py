"""Reconnect pacing: exponential waits with jitter, interruptible by a stop event."""

from __future__ import annotations

import random
import threading


class Backoff:
    """``wait(stop)`` sleeps 0.5 s, 1 s, 2 s ... up to ``maximum``, each scaled by a random factor in
    [0.5, 1] so a fleet restarting together does not reconnect in lockstep. ``reset()`` after a
    success starts the series again."""

    def __init__(self, initial: float = 0.5, maximum: float = 15.0):
        self.initial = initial
        self.maximum = maximum
        self._failures = 0

    @property
    def next_delay(self) -> float:
        return min(self.maximum, self.initial * float(2**self._failures))

    def wait(self, stop: threading.Event) -> bool:
        """Sleep the next delay; True when ``stop`` was set meanwhile."""
        delay = self.next_delay * random.uniform(0.5, 1.0)
        self._failures = min(self._failures + 1, 32)
        return stop.wait(delay)

    def reset(self) -> None:
        self._failures = 0
