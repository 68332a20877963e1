"""The counters on the machine's Redis: one budget shared by separate processes (exactly: the take is
one Lua script), one round trip per take, scripts reloaded after Redis forgot them, and an
unreachable store failing fast so that the budget fails open."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from unittest import mock

import pytest
import redis
from limits import parse

from dps_common.ratelimit.budget import Budget, Policy
from dps_common.ratelimit.counters import RedisCounter
from dps_common.testing.rate_limits import closed_port_url, key_prefix, redis_url

LIMIT = "120/minute"


@pytest.fixture(scope="module")
def url() -> str:
    return redis_url()


@pytest.fixture
def prefix(url: str) -> Iterator[str]:
    with key_prefix(url) as prefix:
        yield prefix


def _taker(url: str, prefix: str, count: int, start: float, results: multiprocessing.Queue) -> None:
    counter = RedisCounter(url, prefix, 1.0)
    item = parse(LIMIT)
    time.sleep(max(0.0, start - time.time()))  # both processes at once
    results.put(sum(counter.take(item, "organization", "org-1")[0] for _ in range(count)))


def test_two_processes_share_one_budget(url: str, prefix: str) -> None:
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue = context.Queue()
    start = time.time() + 1.5
    processes = [context.Process(target=_taker, args=(url, prefix, 100, start, results)) for _ in range(2)]
    for process in processes:
        process.start()
    taken = [results.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=10)
    assert sum(taken) == 120, taken  # 200 asked, the quota granted once, across both processes
    assert all(t > 0 for t in taken), taken


def test_a_take_is_one_round_trip(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse(LIMIT)
    counter.take(item, "organization", "org-1")  # connects (the handshake is not a take)
    with mock.patch.object(redis.connection.Connection, "send_packed_command",
                           autospec=True, side_effect=redis.connection.Connection.send_packed_command) as sent:
        taken, window = counter.take(item, "organization", "org-1")
    assert sent.call_count == 1
    assert taken and window.current_count == 2


def test_scripts_forgotten_by_redis_are_loaded_again(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse(LIMIT)
    storage = counter._storage
    storage.lua_sliding_window.sha = "0" * 40  # as after a restart or a failover: NOSCRIPT
    taken, window = counter.take(item, "organization", "org-1")
    assert taken and window.current_count == 1
    assert storage.lua_sliding_window.sha != "0" * 40


def test_the_window_after_a_refusal(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse("3/minute")
    results = [counter.take(item, "anonymous", "192.0.2.1") for _ in range(4)]
    assert [taken for taken, _ in results] == [True, True, True, False]
    window = results[-1][1]
    assert window.current_count == 3 and 60 < window.current_expires_in <= 120


def test_an_unreachable_store_fails_fast_and_open() -> None:
    budget = Budget(RedisCounter(closed_port_url(), "unused", 0.2), "redis-fail-open")
    policy = Policy("organization", parse("1/minute"))
    started = time.monotonic()
    decisions = [budget.spend(policy, "org-1") for _ in range(20)]
    assert time.monotonic() - started < 1.0  # no retries with back-off, one try per pause
    assert all(d.allowed and not d.counted for d in decisions)


def test_a_forgotten_take_script_takes_once(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse(LIMIT)
    counter._storage.lua_acquire_sliding_window.sha = "0" * 40
    counter._storage.lua_sliding_window.sha = "0" * 40
    taken, window = counter.take(item, "organization", "org-1")
    assert taken and window.current_count == 1
