"""Spending a request budget: a decision with what the RateLimit headers report, failing open.

Framework-free (the HTTP side is ``dps_common.http.rate_limit``). When the store cannot answer, the
request is served uncounted (fail open: a rate limiter must not take the API down with it), a
metric counts it and a log line says so, at most once per ``log_every`` seconds; the store is left
alone for ``retry_after`` seconds so that an outage costs each request nothing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from limits import RateLimitItem
from prometheus_client import Counter as Metric

from dps_common.ratelimit.counters import Counter, Window

log = logging.getLogger("dps.ratelimit")

DECISIONS = Metric(
    "dps_rate_limit_decisions_total",
    "Requests checked against a budget: allowed, refused, or unchecked because the store was unavailable",
    ["service", "policy", "outcome"],
)
STORE_ERRORS = Metric(
    "dps_rate_limit_store_errors_total", "Rate-limit store calls that failed (the request was served unchecked)",
    ["service"],
)


@dataclass(frozen=True, slots=True)
class Policy:
    """A quota policy: its name in the headers, and its limit (quota per window)."""

    name: str
    limit: RateLimitItem

    @property
    def quota(self) -> int:
        return self.limit.amount

    @property
    def window_seconds(self) -> int:
        return self.limit.get_expiry()


@dataclass(frozen=True, slots=True)
class Decision:
    policy: Policy
    allowed: bool
    remaining: int  # units left in the window after this request
    reset_seconds: int  # refused: when to retry; allowed: when the current window ends (1 to the window)
    counted: bool = True  # False: the store was unavailable and the request was served unchecked


def decide(policy: Policy, taken: bool, window: Window) -> Decision:
    """The numbers the headers report, from a sliding window right after a take (``limits``' weighting:
    the last window's count times the share of it still inside the window, plus this window's)."""
    expiry = policy.window_seconds
    weight = window.previous_expires_in / expiry
    used = math.floor(window.previous_count * weight) + window.current_count
    remaining = max(0, policy.quota - used)
    window_ends_in = window.current_expires_in - expiry if window.current_count else float(expiry)
    if taken:
        return Decision(policy, True, remaining, _whole_seconds(window_ends_in, expiry))
    # one fits only strictly after that moment: the next whole second
    return Decision(policy, False, 0, _whole_seconds(math.floor(_until_one_free(policy, window, window_ends_in)) + 1, expiry))


def _until_one_free(policy: Policy, window: Window, window_ends_in: float) -> float:
    """Seconds until one more request fits: the last window's weight falls as time passes, and when
    this window ends its count becomes the last window's and starts falling in turn."""
    expiry = policy.window_seconds
    room = policy.quota - 1 - window.current_count  # what the last window's weighted count must fall to
    if room >= 0 and window.previous_count:
        # floor(previous * (expires_in - t) / expiry) <= room  once  t >= expires_in - (room + 1) * expiry / previous
        # (once this window ends its count, below the quota, is all that weighs: one fits then at the latest)
        return min(window_ends_in, max(0.0, window.previous_expires_in - (room + 1) * expiry / window.previous_count))
    if room >= 0:
        return 0.0
    # this window alone is over: after it ends, floor(current * (expiry - t) / expiry) <= quota - 1
    return window_ends_in + max(0.0, expiry - policy.quota * expiry / window.current_count)


def _whole_seconds(seconds: float, expiry: int) -> int:
    """Delay-seconds as the headers and Retry-After carry them: rounded up, at least 1, at most the window."""
    return min(max(1, math.ceil(seconds)), expiry)


class Budget:
    def __init__(
        self, counter: Counter, service: str, *,
        retry_after: float = 1.0, log_every: float = 10.0, clock: Callable[[], float] = time.monotonic,
    ):
        self._counter = counter
        self._service = service
        self._retry_after = retry_after
        self._log_every = log_every
        self._clock = clock
        self._lock = threading.Lock()
        self._down_until = 0.0  # skip the store until then (after a failure)
        self._down_since: float | None = None
        self._next_log = 0.0
        self._unchecked = 0  # served unchecked since the last log line
        self._metrics: dict[tuple[str, str], Metric] = {}

    def spend(self, policy: Policy, identity: str) -> Decision:
        """One request of ``identity`` (an organization id, a client address) under ``policy``."""
        if self._down_until and self._clock() < self._down_until:
            return self._unchecked_decision(policy, None)
        try:
            taken, window = self._counter.take(policy.limit, policy.name, identity)
        except self._counter.errors as exc:
            STORE_ERRORS.labels(self._service).inc()
            return self._unchecked_decision(policy, exc)
        if self._down_since is not None:
            self._recovered()
        decision = decide(policy, taken, window)
        self._count(policy, "allowed" if taken else "refused")
        return decision

    def _unchecked_decision(self, policy: Policy, error: BaseException | None) -> Decision:
        """Fail open: the request is served; the headers report the whole quota (nothing is being
        counted, so the client may spend that much) rather than a made-up remainder."""
        self._count(policy, "unchecked")
        now = self._clock()
        with self._lock:
            if error is not None:
                self._down_until = now + self._retry_after
                if self._down_since is None:
                    self._down_since = now
            self._unchecked += 1
            due = now >= self._next_log
            if due:
                self._next_log = now + self._log_every
                unchecked, self._unchecked = self._unchecked, 0
        if due:
            log.error(
                "rate-limit store unavailable: requests are served without a limit (fail open)",
                extra={"service": self._service, "uncheckedRequests": unchecked,
                       "error": repr(error) if error is not None else "waiting before the next try"},
            )
        return Decision(policy, True, policy.quota, policy.window_seconds, counted=False)

    def _recovered(self) -> None:
        with self._lock:
            if self._down_since is None:
                return
            down_for, self._down_since = self._clock() - self._down_since, None
            self._down_until, self._next_log, unchecked, self._unchecked = 0.0, 0.0, self._unchecked, 0
        log.warning("rate-limit store available again", extra={
            "service": self._service, "downSeconds": round(down_for, 1), "uncheckedRequests": unchecked})

    def _count(self, policy: Policy, outcome: str) -> None:
        # labelled children looked up once: ``labels()`` validates and locks on every call
        metric = self._metrics.get((policy.name, outcome))
        if metric is None:
            metric = self._metrics[(policy.name, outcome)] = DECISIONS.labels(self._service, policy.name, outcome)
        metric.inc()
