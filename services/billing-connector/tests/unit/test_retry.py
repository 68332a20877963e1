"""Retries (backoff with full jitter, Retry-After, bounded attempts and time), Retry-After parsing, and
the in-process pacer, on a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from dps_billing.adapters.billing_platform.errors import PlatformRejected, PlatformUnauthorized, PlatformUnavailable
from dps_billing.adapters.billing_platform.pacing import IntervalPacer
from dps_billing.adapters.billing_platform.retry import Retrier, RetryPolicy, parse_retry_after


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds


class Script:
    """Raises the given errors in turn, then returns "ok"; each call takes ``call_seconds``."""

    def __init__(self, clock: FakeClock, *errors: Exception, call_seconds: float = 0.0) -> None:
        self.clock = clock
        self.errors = list(errors)
        self.calls = 0
        self.call_seconds = call_seconds

    def __call__(self) -> str:
        self.calls += 1
        self.clock.now += self.call_seconds
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def retrier(clock: FakeClock, policy: RetryPolicy | None = None, random: float = 1.0) -> Retrier:
    return Retrier(policy or RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=8.0, max_total=60.0),
                   clock=clock, sleep=clock.sleep, random=lambda: random)


def busy(retry_after: float | None = None) -> PlatformUnavailable:
    return PlatformUnavailable("busy", status=429, retry_after=retry_after)


def test_backoff_is_exponential_capped_and_fully_jittered() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0)
    assert [policy.backoff(n, lambda: 1.0) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert policy.backoff(3, lambda: 0.25) == 0.5
    assert policy.backoff(3, lambda: 0.0) == 0.0


def test_transient_failures_are_retried_until_success() -> None:
    clock = FakeClock()
    call = Script(clock, busy(), PlatformUnavailable("down", status=503), PlatformUnavailable("no connection"))
    assert retrier(clock).run(call) == "ok"
    assert call.calls == 4 and clock.sleeps == [0.5, 1.0, 2.0]


def test_retry_after_is_a_floor() -> None:
    clock = FakeClock()
    call = Script(clock, busy(retry_after=3), busy(retry_after=0.1))
    assert retrier(clock).run(call) == "ok"
    assert clock.sleeps == [3.0, 1.0]


def test_attempts_are_bounded() -> None:
    clock = FakeClock()
    call = Script(clock, *[busy() for _ in range(10)])
    with pytest.raises(PlatformUnavailable):
        retrier(clock, RetryPolicy(max_attempts=3, max_total=600)).run(call)
    assert call.calls == 3 and len(clock.sleeps) == 2


def test_total_time_is_bounded() -> None:
    clock = FakeClock()
    call = Script(clock, *[busy() for _ in range(10)], call_seconds=4.5)
    with pytest.raises(PlatformUnavailable):
        retrier(clock, RetryPolicy(max_attempts=10, base_delay=1, max_delay=1, max_total=10)).run(call)
    # 4.5 s call, 1 s wait, 4.5 s call: the next wait would end past 10 s (a call under way is bounded by its timeout)
    assert call.calls == 2 and clock.sleeps == [1.0]


def test_a_retry_after_beyond_the_budget_ends_at_once_with_the_hint() -> None:
    clock = FakeClock()
    call = Script(clock, busy(retry_after=120))
    with pytest.raises(PlatformUnavailable) as raised:
        retrier(clock).run(call)
    assert call.calls == 1 and clock.sleeps == [] and raised.value.retry_after == 120


@pytest.mark.parametrize("error", [
    PlatformRejected("bad", status=400, code="parameter_invalid_integer", param="unit_amount"),
    PlatformUnauthorized("expired", status=401),
    PlatformUnavailable("tls", retry_later=False),
    ValueError("a bug"),
])
def test_other_failures_are_not_retried(error: Exception) -> None:
    clock = FakeClock()
    call = Script(clock, error)
    with pytest.raises(type(error)):
        retrier(clock).run(call)
    assert call.calls == 1 and clock.sleeps == []


def test_parse_retry_after() -> None:
    assert parse_retry_after(None) is None
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("nan") is None
    moment = datetime(2026, 3, 10, 12, 0, 30, tzinfo=UTC)
    assert parse_retry_after(format_datetime(moment, usegmt=True),
                             wall_clock=lambda: datetime(2026, 3, 10, 12, tzinfo=UTC).timestamp()) == 30.0


def test_the_pacer_spaces_calls_per_account() -> None:
    clock = FakeClock()
    pacer = IntervalPacer(4, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        pacer.wait_turn("acct_1")
    pacer.wait_turn("acct_2")
    assert clock.sleeps == [0.25, 0.25]  # acct_2 has its own turns
    clock.now += 10
    pacer.wait_turn("acct_1")
    assert clock.sleeps == [0.25, 0.25]
    with pytest.raises(ValueError):
        IntervalPacer(0)
