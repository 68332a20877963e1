"""Faults a test switches on: error answers (429, 500, ...), latency, dropped connections; for the next N
matching calls, a fraction of them, or all, by path prefix and method. And a rate limit: 429 for a call
that arrives when the account already had N calls admitted in the second before it. And a hold: matching
calls wait, received but not yet in effect, until the test releases them (what is in flight at the
platform, known instead of timed)."""

from __future__ import annotations

import random
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import ApiError

Kind = Literal["status", "latency", "drop", "rate", "hold"]
HOLD_LIMIT_SECONDS = 120.0  # a hold never released still ends, so a failed test cannot hang the server


@dataclass
class Fault:
    kind: Kind
    path_prefix: str = "/"
    method: str | None = None
    count: int | None = None  # calls left; None: no limit
    fraction: float | None = None  # chance per matching call; None: every one
    status: int = 500
    retry_after: float | None = None
    should_retry: bool | None = None
    stored: bool = False  # a status answer is stored under the idempotency key, as an endpoint's own failure
    code: str | None = None
    seconds: float = 0.0
    after_processing: bool = False  # a drop after the request took effect: the answer is lost
    per_second: int = 0  # a rate limit: calls admitted per account in any `window` seconds
    window: float = 1.0
    fired: int = 0
    # a rate limit's admitted arrivals per account (monotonic seconds), oldest first
    _admitted: dict[str, deque[float]] = field(default_factory=dict, repr=False, compare=False)
    held: int = 0  # a hold's calls waiting now
    _released: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def matches(self, method: str, path: str) -> bool:
        return path.startswith(self.path_prefix) and (self.method is None or self.method == method.upper())

    def error(self) -> ApiError:
        """The answer of a status fault, in Stripe's shape and headers."""
        headers: dict[str, str] = {}
        if self.retry_after is not None:
            headers["Retry-After"] = f"{self.retry_after:g}"
        should_retry = self.should_retry
        if should_retry is None and self.status >= 500:
            # A stored failure would only be replayed: Stripe says not to retry it.
            should_retry = not self.stored
        if should_retry is not None:
            headers["Stripe-Should-Retry"] = "true" if should_retry else "false"
        if self.status == 429:
            code = self.code or "rate_limit"
            message = (
                "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits."
                if code == "rate_limit"
                else "This object cannot be accessed right now because another API request or Stripe process is "
                "currently accessing it. If you see this error intermittently, retry the request."
            )
            return ApiError(429, message, code=code, headers=headers)
        if self.status >= 500:
            return ApiError(
                self.status, "An unknown error occurred", type="api_error", code=self.code, headers=headers
            )
        return ApiError(self.status, f"Injected fault: {self.status}", code=self.code, headers=headers)


class Faults:
    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition()  # a hold's count of calls changed
        self._faults: list[Fault] = []
        self._random = random.Random(seed)

    def add(
        self,
        path_prefix: str = "/",
        status: int = 500,
        *,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        count: int | None = None,
        fraction: float | None = None,
        method: str | None = None,
        stored: bool = False,
        code: str | None = None,
    ) -> Fault:
        """An error answer. 429s come before anything is checked; with `stored=True` (a failure of the
        endpoint itself) the answer is kept under the request's idempotency key and replayed."""
        if not 400 <= status <= 599:
            raise ValueError("a fault's status is 4xx or 5xx")
        return self._add(
            Fault("status", path_prefix, _method(method), count, _fraction(fraction), status=status,
                  retry_after=retry_after, should_retry=should_retry, stored=stored, code=code)
        )

    def latency(
        self,
        seconds: float,
        *,
        path_prefix: str = "/",
        count: int | None = None,
        fraction: float | None = None,
        method: str | None = None,
    ) -> Fault:
        """A delay before the call takes effect (after it claimed its idempotency key)."""
        return self._add(Fault("latency", path_prefix, _method(method), count, _fraction(fraction), seconds=seconds))

    def drop(
        self,
        count: int | None = 1,
        *,
        path_prefix: str = "/",
        fraction: float | None = None,
        method: str | None = None,
        after_processing: bool = False,
    ) -> Fault:
        """Closes the connection without an answer; with `after_processing=True` the call took effect first
        (its idempotency key holds the answer the client never got)."""
        return self._add(
            Fault("drop", path_prefix, _method(method), count, _fraction(fraction), after_processing=after_processing)
        )

    def rate_limit(
        self, per_second: int, *, path_prefix: str = "/v1/", method: str | None = None, window: float = 1.0,
        retry_after: float | None = None,
    ) -> Fault:
        """Stripe's rate limiter: a matching call is answered 429 `rate_limit` (before anything is checked,
        nothing stored) when `per_second` calls of the same account were already admitted in the `window`
        seconds before it. Refused calls do not count. Stripe sends no `Retry-After`; give one to test it."""
        if per_second < 1:
            raise ValueError("per_second is at least 1")
        if window <= 0:
            raise ValueError("window is positive")
        return self._add(Fault("rate", path_prefix, _method(method), status=429, retry_after=retry_after,
                               per_second=per_second, window=window))

    def hold(self, *, path_prefix: str = "/", method: str | None = None) -> Fault:
        """Matching calls wait (after they claimed their idempotency key, where latency sleeps) until
        ``release``: ``wait_held`` says when the platform has received them, and nothing of theirs has
        taken effect before ``release``."""
        return self._add(Fault("hold", path_prefix, _method(method)))

    def wait_held(self, fault: Fault, calls: int, timeout: float) -> None:
        """Until ``fault`` holds ``calls`` calls at once (TimeoutError after ``timeout`` seconds)."""
        with self._changed:
            if not self._changed.wait_for(lambda: fault.held >= calls, timeout):
                raise TimeoutError(f"{fault.held} of {calls} calls held after {timeout} s")

    def release(self, fault: Fault) -> None:
        """The calls ``fault`` holds go on (and it holds no more)."""
        self.remove(fault)
        fault._released.set()

    def held_until_released(self, fault: Fault) -> None:
        """Called by the server for a call ``fault`` took: waits for ``release``."""
        with self._changed:
            fault.held += 1
            self._changed.notify_all()
        try:
            fault._released.wait(HOLD_LIMIT_SECONDS)
        finally:
            with self._changed:
                fault.held -= 1
                self._changed.notify_all()

    def over_rate(self, method: str, path: str, account: str, at: float) -> Fault | None:
        """The rate limit that refuses this call (arriving at monotonic time `at` for `account`), if any;
        otherwise the call is admitted and counted by every rate limit it matches."""
        with self._lock:
            limits = [f for f in self._faults if f.kind == "rate" and f.matches(method, path)]
            for fault in limits:
                admitted = fault._admitted.setdefault(account, deque())
                while admitted and admitted[0] <= at - fault.window:
                    admitted.popleft()
                if len(admitted) >= fault.per_second:
                    fault.fired += 1
                    return fault
            for fault in limits:
                fault._admitted[account].append(at)
        return None

    def remove(self, fault: Fault) -> None:
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def active(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def _add(self, fault: Fault) -> Fault:
        if fault.count is not None and fault.count < 1:
            raise ValueError("count is at least 1 (None: every call)")
        with self._lock:
            self._faults.append(fault)
        return fault

    def take(self, kind: Kind, method: str, path: str, **match: Any) -> Fault | None:
        """The first fault of this kind that fires on this call (using up one of its count)."""
        with self._lock:
            for fault in self._faults:
                if fault.kind != kind or not fault.matches(method, path):
                    continue
                if any(getattr(fault, name) != value for name, value in match.items()):
                    continue
                if fault.fraction is not None and self._random.random() >= fault.fraction:
                    continue
                fault.fired += 1
                if fault.count is not None:
                    fault.count -= 1
                    if fault.count == 0:
                        self._faults.remove(fault)
                return fault
        return None


def _method(method: str | None) -> str | None:
    return method.upper() if method is not None else None


def _fraction(fraction: float | None) -> float | None:
    if fraction is not None and not 0.0 < fraction <= 1.0:
        raise ValueError("fraction is in (0, 1]")
    return fraction
