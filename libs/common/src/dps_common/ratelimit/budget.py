"""Spending a request budget: a decision with what the RateLimit headers report, failing open.

Framework-free (the HTTP side is ``dps_common.http.rate_limit``). When the store cannot answer, the
request is served uncounted (fail open: a rate limiter must not take the API down with it), a
metric counts it and a log line says so, at most once per ``log_every`` seconds; the store is left
alone for ``retry_after`` seconds so that an outage costs each request nothing.

Fewer round trips than requests. One round trip to Redis per request cost about 120 us of client
CPU against whoami's 350 us (more under gevent, with the greenlets that wait for it), so no faster
call could meet the budget of 75 % of a bare app's throughput; the calls had to become rarer. Two
mechanisms, per process and per key (a policy and an organization or address), both keeping the
shared counter the only authority:

- **Leases.** A round trip takes one unit for the request at hand plus, when the window has room,
  ``size - 1`` more that this process then spends locally. ``size`` follows the process's own rate
  for the key: about ``lease_seconds`` of its recent traffic (RATE_LIMIT_LEASE_SECONDS, 50 ms; 1
  below 20 requests a second, so light traffic is counted exactly, one take per request as before),
  and at most ``lease_share`` (1 %) of the quota, so quotas under 200 per window never lease. When
  half a lease is spent, the request that spent it takes the next one, so under steady load no
  request waits for Redis (the others spend the rest meanwhile). The units are counted in Redis when
  leased, so no process ever spends a unit the shared counter has not granted: leases never overrun
  the budget. The price is the other way: units leased and not spent before the window they were
  counted in ends lapse (spent in the next window they would weigh as the last window's, less than
  a whole unit), so a client at its quota may be refused early by what the busy processes hold, at
  most 1 % of the quota each. Under a flood the round trips fall to about 1 / (rate x 25 ms) of the
  requests (2 % at 2,000 requests a second per process; the bench measures 1 to 2 %).
- **Refusals remembered.** A refused take tells when the next unit frees (the sliding window's
  arithmetic in ``decide``); until then this process refuses the key without asking, so a client
  over its budget costs no round trip, however fast it retries. Redis is asked again at that
  moment, so nothing is refused longer than the shared counter would.

Why ``limits``' own scripts suffice: a take is ``limits``' acquire script for the request's unit and
again for the rest of the lease, in one pipeline with its window read (``counters``); near the end
of the budget the second part fails alone and the request is still served.

Not chosen: counting locally and flushing increments to Redis in batches every few ms (a background
greenlet per process). It costs as few round trips, but decides before the shared count is known,
so N processes can each overrun the quota by what they admit between flushes, and the flusher has
to be started after gunicorn forks and stopped cleanly. Leases need no background work: the round
trips happen in requests, and under gevent's worker the locks here are gevent's.

The headers stay truthful within the same bounds: ``remaining`` is what the last round trip saw
minus what this process has spent since (exact with one process or light traffic; otherwise off by
what other processes spent since their trip or hold unspent), and ``reset`` is aged from that moment.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

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
STORE_TAKES = Metric(
    "dps_rate_limit_store_takes_total",
    "Round trips to the rate-limit store (leases and remembered refusals keep them below the requests)",
    ["service"],
)

LEASE_SECONDS = 0.05  # a lease covers about this much of the process's traffic for the key (RATE_LIMIT_LEASE_SECONDS)
LEASE_SHARE = 0.01  # and at most this share of the quota (what a busy process may leave unspent)
MAX_KEYS = 100_000  # keys remembered per process; beyond, a key is taken one unit at a time
SWEEP_SECONDS = 5.0  # how often keys with nothing to remember are forgotten
# allowed decisions spent from a lease reach the metric this many at a time (or at the next round
# trip): an increment in prometheus-client's multiprocess mode locks and writes a file, ~3 % of a
# whoami's CPU when done for each request
METRIC_BATCH = 32


@dataclass(frozen=True, slots=True)
class Policy:
    """A quota policy: its name in the headers, and its limit (quota per window)."""

    name: str
    limit: RateLimitItem
    quota: int = field(init=False)  # read on every request: kept rather than asked of ``limit``
    window_seconds: int = field(init=False)
    # the RateLimit-Policy field (a structured-field list: the name a String, the parameters Integers),
    # the same on every answer: made once
    header: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "quota", self.limit.amount)
        object.__setattr__(self, "window_seconds", self.limit.get_expiry())
        object.__setattr__(self, "header", f'"{self.name}";q={self.quota};w={self.window_seconds}')


class Decision(NamedTuple):
    """What one request was told (a tuple: made on every limited request, half the cost of a frozen
    dataclass's ``__init__``)."""

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
    window_ends_in = _window_ends_in(policy, window)
    if taken:
        return Decision(policy, True, remaining, _whole_seconds(window_ends_in, expiry))
    # one fits only strictly after that moment: the next whole second
    return Decision(policy, False, 0, _whole_seconds(math.floor(_until_one_free(policy, window, window_ends_in)) + 1, expiry))


def until_one_free(policy: Policy, window: Window) -> float:
    """Seconds until one more request fits the window (0 if one fits now)."""
    return _until_one_free(policy, window, _window_ends_in(policy, window))


def aged(window: Window, seconds: float, expiry: int) -> Window:
    """The window ``seconds`` after it was read, as Redis would shift it: when this window ends its
    count becomes the last window's, weighing for one more window."""
    current_expires_in = window.current_expires_in - seconds
    if window.current_count and current_expires_in <= expiry:  # shifted
        return Window(window.current_count, max(0.0, current_expires_in), 0, 0.0)
    return Window(window.previous_count, max(0.0, window.previous_expires_in - seconds),
                  window.current_count, max(0.0, current_expires_in))


def _window_ends_in(policy: Policy, window: Window) -> float:
    expiry = policy.window_seconds
    return window.current_expires_in - expiry if window.current_count else float(expiry)


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


@dataclass(slots=True, eq=False)
class _Key:
    """What this process knows of one key (a policy and an identity) between round trips."""

    flight: threading.Lock = field(default_factory=threading.Lock)  # one round trip at a time per key
    units: int = 0  # leased and not yet spent
    lease_ends: float = 0.0  # they lapse then: the end of the window they were counted in
    refused_until: float = 0.0  # refused without asking until then: when the next unit frees
    window: Window | None = None  # as the last round trip read it (the lease's units included)
    read_at: float = 0.0  # when that trip was sent (the window is aged from then)
    served: int = 0  # requests since then (their rate sizes the next lease)
    lease_size: int = 0  # units the last round trip took (a refill is due when half are spent)
    refilling: bool = False  # a refill is under way
    exhausted: bool = False  # the last refill found no room: none until a request's own trip


def _leased(policy: Policy, key: _Key, now: float) -> Decision:
    """``decide`` for a unit of the lease, inlined: the path of nearly every request under load.
    Within the lease the window has not moved on (it lapses when the window ends): only the last
    window's weight has fallen since the trip."""
    window, expiry, elapsed = key.window, policy.window_seconds, now - key.read_at
    assert window is not None
    previous_expires_in = window.previous_expires_in - elapsed
    used = window.current_count - key.units
    if previous_expires_in > 0:
        used += math.floor(window.previous_count * (previous_expires_in / expiry))  # as decide weighs it
    reset = min(max(1, math.ceil(window.current_expires_in - elapsed - expiry)), expiry)
    return Decision(policy, True, max(0, policy.quota - used), reset)


class Budget:
    def __init__(
        self, counter: Counter, service: str, *,
        retry_after: float = 1.0, log_every: float = 10.0, clock: Callable[[], float] = time.monotonic,
        lease_seconds: float = LEASE_SECONDS, lease_share: float = LEASE_SHARE, max_keys: int = MAX_KEYS,
    ):
        self._counter = counter
        self._service = service
        self._retry_after = retry_after
        self._log_every = log_every
        self._clock = clock
        # in-process counting has no round trip to save: one unit at a time, exact per process
        self._lease_seconds = lease_seconds if counter.shared else 0.0
        self._lease_share = lease_share
        self._max_keys = max_keys
        self._lock = threading.Lock()
        self._down_until = 0.0  # skip the store until then (after a failure)
        self._down_since: float | None = None
        self._next_log = 0.0
        self._unchecked = 0  # served unchecked since the last log line
        self._metrics: dict[tuple[str, str], Metric] = {}
        self._takes = STORE_TAKES.labels(service)
        # a plain lock: held for a few dictionary and integer operations, never across a round trip
        # (under gevent it is gevent's, and nothing inside yields)
        self._keys_lock = threading.Lock()
        self._keys: dict[tuple[str, str], _Key] = {}
        self._next_sweep = 0.0
        self._leased_uncounted: dict[str, int] = {}  # per policy: allowed from a lease, not yet in the metric

    def spend(self, policy: Policy, identity: str) -> Decision:
        """One request of ``identity`` (an organization id, a client address) under ``policy``."""
        now = self._clock()
        refill, uncounted = False, 0
        with self._keys_lock:
            key = self._key(policy, identity, now)
            key.served += 1
            decision = self._local(policy, key, now)
            if decision is not None and decision.allowed:  # a unit of the lease
                refill = self._refill_due(key, now)
                if refill:
                    key.refilling = True  # claimed: one refill at a time
                uncounted = self._leased_uncounted.get(policy.name, 0) + 1
                self._leased_uncounted[policy.name] = 0 if uncounted >= METRIC_BATCH else uncounted
        if decision is not None and decision.allowed:
            if uncounted >= METRIC_BATCH:
                self._count(policy, "allowed", uncounted)
            if refill:
                self._refill(policy, identity, key)
            return decision
        if decision is None:
            with key.flight:  # others wait here for the trip under way, then spend what it brought
                with self._keys_lock:
                    decision = self._local(policy, key, self._clock())
                if decision is None:
                    decision = self._take(policy, identity, key)
        if decision.counted:
            self._count(policy, "allowed" if decision.allowed else "refused")
        return decision

    def _count_leased(self, policy: Policy) -> None:
        """The allowed decisions not yet in the metric, added now (at each round trip)."""
        with self._keys_lock:
            uncounted = self._leased_uncounted.pop(policy.name, 0)
        if uncounted:
            self._count(policy, "allowed", uncounted)

    def _key(self, policy: Policy, identity: str, now: float) -> _Key:
        if now >= self._next_sweep:
            self._sweep(now)
        key = self._keys.get((policy.name, identity))
        if key is None:
            key = _Key()
            if len(self._keys) < self._max_keys:  # else a key of its own, forgotten after this request
                self._keys[(policy.name, identity)] = key
        return key

    def _sweep(self, now: float) -> None:
        """Forgets the keys with no units and no refusal to remember (addresses seen once, mostly)."""
        self._next_sweep = now + SWEEP_SECONDS
        idle = [name for name, key in self._keys.items()
                if (not key.units or now >= key.lease_ends) and now >= key.refused_until and not key.flight.locked()]
        for name in idle:
            del self._keys[name]

    def _local(self, policy: Policy, key: _Key, now: float) -> Decision | None:
        """The decision without a round trip, if this process can make it: a unit of its lease, or a
        refusal it remembers. Called with the keys' lock held."""
        if key.window is None:
            return None
        if key.units and now < key.lease_ends:
            key.units -= 1
            return _leased(policy, key, now)
        if now < key.refused_until:
            return decide(policy, False, self._known(policy, key, now))
        return None

    @staticmethod
    def _known(policy: Policy, key: _Key, now: float) -> Window:
        """The window as last read, aged to ``now``, counting only the units spent (those this
        process still holds are not used yet)."""
        assert key.window is not None
        window = key.window
        if key.units and now < key.lease_ends:
            window = Window(window.previous_count, window.previous_expires_in,
                            window.current_count - key.units, window.current_expires_in)
        return aged(window, now - key.read_at, policy.window_seconds)

    def _lease_size(self, policy: Policy, key: _Key, now: float) -> int:
        """About ``lease_seconds`` of this process's traffic for the key since its last round trip."""
        cap = int(policy.quota * self._lease_share)
        if cap <= 1 or key.window is None or not self._lease_seconds:
            return 1
        rate = key.served / max(now - key.read_at, 1e-3)
        return max(1, min(cap, int(rate * self._lease_seconds)))

    def _refill_due(self, key: _Key, now: float) -> bool:
        """Half the lease spent: time to take the next, so that it arrives before this one runs out
        and no request waits for a round trip. Called with the keys' lock held."""
        return (key.lease_size > 1 and key.units * 2 <= key.lease_size and not key.refilling
                and not key.exhausted and now >= self._down_until)

    def _refill(self, policy: Policy, identity: str, key: _Key) -> None:
        """Takes the next lease while the rest of this one is spent (by the request that spent the
        half: it was already decided, and waits for this round trip alone)."""
        try:
            with key.flight:
                sent = self._clock()
                cap = int(policy.quota * self._lease_share)
                size = min(self._lease_size(policy, key, sent), cap - key.units)
                if size < 1:
                    return
                sized_on = key.served
                self._takes.inc()
                self._count_leased(policy)
                try:
                    taken, window = self._counter.take(policy.limit, size, policy.name, identity)
                except self._counter.errors as exc:
                    STORE_ERRORS.labels(self._service).inc()
                    self._store_failed(exc)
                    return
                if self._down_since is not None:
                    self._recovered()
                with self._keys_lock:
                    ends = sent + _window_ends_in(policy, window)
                    # the units left were counted in the window that was current before: kept if the
                    # new ones were counted in the same one (and so lapse at the same time)
                    same_window = abs(ends - key.lease_ends) < policy.window_seconds / 2
                    key.units = (key.units if same_window and sent < key.lease_ends else 0) + taken
                    key.window, key.read_at, key.served = window, sent, key.served - sized_on
                    key.lease_ends, key.lease_size, key.exhausted = ends, taken, not taken
        finally:
            key.refilling = False

    def _take(self, policy: Policy, identity: str, key: _Key) -> Decision:
        """A round trip: takes the request's unit and the lease, or learns until when to refuse."""
        if self._down_until and self._clock() < self._down_until:
            return self._unchecked_decision(policy, None)
        sent = self._clock()
        size = self._lease_size(policy, key, sent)
        # the requests the estimate counted; those arriving during the trip (waiting for it, under
        # gevent) are the next estimate's
        sized_on = key.served
        self._takes.inc()
        self._count_leased(policy)
        try:
            taken, window = self._counter.take(policy.limit, size, policy.name, identity)
        except self._counter.errors as exc:
            STORE_ERRORS.labels(self._service).inc()
            return self._unchecked_decision(policy, exc)
        if self._down_since is not None:
            self._recovered()
        # times from when the trip was sent: the lease lapses no later than its window ends in Redis,
        # and a refusal is remembered no longer than Redis would refuse
        with self._keys_lock:
            key.window, key.read_at, key.served = window, sent, key.served - sized_on
            key.units, key.lease_size, key.exhausted = max(0, taken - 1), taken, False
            key.lease_ends = sent + _window_ends_in(policy, window) if key.units else 0.0
            key.refused_until = 0.0 if taken else sent + until_one_free(policy, window)
            return decide(policy, bool(taken), self._known(policy, key, sent))

    def _store_failed(self, error: BaseException) -> None:
        """The store left alone for ``retry_after`` seconds."""
        now = self._clock()
        with self._lock:
            self._down_until = now + self._retry_after
            if self._down_since is None:
                self._down_since = now

    def _unchecked_decision(self, policy: Policy, error: BaseException | None) -> Decision:
        """Fail open: the request is served; the headers report the whole quota (nothing is being
        counted, so the client may spend that much) rather than a made-up remainder."""
        self._count(policy, "unchecked")
        if error is not None:
            self._store_failed(error)
        now = self._clock()
        with self._lock:
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

    def _count(self, policy: Policy, outcome: str, amount: int = 1) -> None:
        # labelled children looked up once: ``labels()`` validates and locks on every call
        metric = self._metrics.get((policy.name, outcome))
        if metric is None:
            metric = self._metrics[(policy.name, outcome)] = DECISIONS.labels(self._service, policy.name, outcome)
        metric.inc(amount)
