"""Retries with exponential backoff and full jitter, within a bounded number of attempts and time.

A call is tried again only when it failed with ``PlatformUnavailable`` whose ``retry_later`` holds
(connection errors, 409, 429, 5xx, unless the platform said ``Stripe-Should-Retry: false``). The wait
before attempt n+1 is uniform in [0, min(max_delay, base_delay x 2^(n-1))] (full jitter: callers that
failed together do not come back together), and at least the platform's ``Retry-After``. When the
next wait would pass ``max_total`` seconds since the first attempt, the last error is raised at once
(its ``retry_after`` tells the caller when to come back).
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from dps_billing.adapters.billing_platform.errors import PlatformUnavailable

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total: float = 30.0  # seconds from the first attempt, waits and calls included

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.base_delay < 0 or self.max_delay < 0 or self.max_total < 0:
            raise ValueError("a retry policy needs at least one attempt and no negative time")

    def backoff(self, failed_attempt: int, random: Callable[[], float]) -> float:
        """The jittered wait after attempt ``failed_attempt`` (1-based); ``random`` is in [0, 1)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (failed_attempt - 1))
        return ceiling * random()


class Retrier:
    def __init__(self, policy: RetryPolicy | None = None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 random: Callable[[], float] = _random.random) -> None:
        self.policy = policy or RetryPolicy()
        self._clock = clock
        self._sleep = sleep
        self._random = random

    def run(self, attempt: Callable[[], T]) -> T:
        started = self._clock()
        failed = 0
        while True:
            try:
                return attempt()
            except PlatformUnavailable as error:
                failed += 1
                if not error.retry_later or failed >= self.policy.max_attempts:
                    raise
                wait = max(self.policy.backoff(failed, self._random), error.retry_after or 0.0)
                if self._clock() - started + wait > self.policy.max_total:
                    raise
                self._sleep(wait)


def parse_retry_after(value: str | None, *, wall_clock: Callable[[], float] = time.time) -> float | None:
    """``Retry-After`` in seconds: delay-seconds or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - wall_clock()
        except (TypeError, ValueError, IndexError):
            return None
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    return max(0.0, seconds)
