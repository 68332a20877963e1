"""The budgets on the machine's Redis: one budget shared by separate processes (exactly under light
traffic, within the leases' bound under a flood, never over), leases sized by the traffic and lapsing
with their window, refusals remembered until a unit frees, headers that tell the truth, one round trip
per take, scripts reloaded after Redis forgot them, and an unreachable store failing fast and open."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Iterator
from unittest import mock

import pytest
import redis
from limits import parse

from dps_common.ratelimit.budget import DECISIONS, METRIC_BATCH, STORE_TAKES, Budget, Decision, Policy
from dps_common.ratelimit.counters import RedisCounter, Window
from dps_testing.rate_limits import closed_port_url, key_prefix, redis_url

LIMIT = "120/minute"


@pytest.fixture(scope="module")
def url() -> str:
    return redis_url()


@pytest.fixture
def prefix(url: str) -> Iterator[str]:
    with key_prefix(url) as prefix:
        yield prefix


class _Clock:
    """A clock the test moves (the budget's: lease sizes and lapses, remembered refusals)."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now


def _takes(service: str) -> float:
    return sum(s.value for family in STORE_TAKES.collect() for s in family.samples
               if s.name.endswith("_total") and s.labels.get("service") == service)


def _spender(url: str, prefix: str, limit: str, count: int, start: float, results: multiprocessing.Queue) -> None:
    """A process of its own spending ``count`` requests as fast as it can: (allowed, round trips)."""
    budget = Budget(RedisCounter(url, prefix, 1.0), "spender")
    policy = Policy("organization", parse(limit))
    time.sleep(max(0.0, start - time.time()))  # both processes at once
    allowed = sum(budget.spend(policy, "org-1").allowed for _ in range(count))
    results.put((allowed, _takes("spender")))


def _in_two_processes(url: str, prefix: str, limit: str, count: int) -> list[tuple[int, float]]:
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue = context.Queue()
    start = time.time() + 2.0
    processes = [context.Process(target=_spender, args=(url, prefix, limit, count, start, results)) for _ in range(2)]
    for process in processes:
        process.start()
    outcome = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=10)
    return outcome


def test_two_processes_share_one_budget_exactly_when_it_is_small(url: str, prefix: str) -> None:
    # 1 % of 120 is not a unit: no leases, every request takes from Redis
    outcome = _in_two_processes(url, prefix, LIMIT, 100)
    allowed = [a for a, _ in outcome]
    assert sum(allowed) == 120, outcome  # 200 asked, the quota granted once, across both processes
    assert all(a > 0 for a in allowed), outcome


def test_two_flooding_processes_share_one_budget_within_their_leases(url: str, prefix: str) -> None:
    # leases of up to 20 units (1 % of the quota): a process may be left holding at most 20 unspent
    outcome = _in_two_processes(url, prefix, "2000/minute", 3000)
    allowed, takes = sum(a for a, _ in outcome), sum(t for _, t in outcome)
    assert 2000 - 2 * 20 <= allowed <= 2000, outcome  # never over; under by what leases strand, <= 2 %
    # leased units served most requests, and the refusals after the quota cost one trip per process
    assert takes < 2000 / 4, outcome


# A gunicorn worker of ours (dps_common.edge.worker) in small: gevent's monkey-patching first, then
# greenlets sharing one budget, each request yielding once as writing its response would.
GREENLETS = """
from gevent import monkey; monkey.patch_all()
import json, sys, time
import gevent
from limits import parse
from dps_common.ratelimit.budget import STORE_TAKES, Budget, Policy
from dps_common.ratelimit.counters import RedisCounter

url, prefix, limit, greenlets, each = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
budget, policy = Budget(RedisCounter(url, prefix, 1.0), "greenlets"), Policy("organization", parse(limit))

def client():
    allowed = 0
    for _ in range(each):
        allowed += budget.spend(policy, "org-1").allowed
        work = time.perf_counter() + 0.0002
        while time.perf_counter() < work:
            pass
        gevent.sleep(0)
    return allowed

clients = [gevent.spawn(client) for _ in range(greenlets)]
gevent.joinall(clients, raise_error=True)
takes = sum(s.value for f in STORE_TAKES.collect() for s in f.samples if s.name.endswith("_total"))
print(json.dumps({"allowed": sum(c.value for c in clients), "takes": takes}))
"""


def _greenlets(url: str, prefix: str, limit: str, greenlets: int, each: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", GREENLETS, url, prefix, limit, str(greenlets), str(each)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_greenlets_of_one_worker_share_their_leases(url: str, prefix: str) -> None:
    # while one greenlet takes from Redis the others wait for it, and their requests size the next lease
    outcome = _greenlets(url, prefix, "1000000/minute", 8, 400)
    assert outcome["allowed"] == 3200
    assert outcome["takes"] <= 3200 / 10, outcome


def test_greenlets_at_the_quota_never_overrun_it(url: str, prefix: str) -> None:
    outcome = _greenlets(url, prefix, "2000/minute", 8, 400)  # leases of up to 20
    assert 2000 - 20 <= outcome["allowed"] <= 2000, outcome
    assert outcome["takes"] <= 3200 / 4, outcome


def _budget(url: str, prefix: str, clock: _Clock | None = None, service: str = "redis-leases") -> Budget:
    return Budget(RedisCounter(url, prefix, 1.0), service, **({"clock": clock} if clock else {}))


def _redis_count(url: str, prefix: str, policy: Policy, identity: str) -> Window:
    return Window(*RedisCounter(url, prefix, 1.0)._storage.get_sliding_window(
        policy.limit.key_for(policy.name, identity), policy.window_seconds))


def test_light_traffic_is_counted_one_request_at_a_time(url: str, prefix: str) -> None:
    clock, policy = _Clock(), Policy("organization", parse("1000/minute"))  # leases of up to 10
    budget = _budget(url, prefix, clock, "redis-light")
    before = _takes("redis-light")
    for n in range(1, 31):
        clock.now += 0.1  # 10 requests a second: under one request per lease period (50 ms)
        decision = budget.spend(policy, "org-1")
        assert decision.allowed and decision.remaining == 1000 - n
        assert _redis_count(url, prefix, policy, "org-1").current_count == n  # nothing leased ahead
    assert _takes("redis-light") - before == 30


def test_a_flood_takes_leases_and_the_headers_stay_exact_in_one_process(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("100000/minute"))  # leases of up to 1,000
    budget = _budget(url, prefix, service="redis-flood")
    before = _takes("redis-flood")
    decisions = [budget.spend(policy, "org-1") for _ in range(3000)]
    trips = _takes("redis-flood") - before
    assert all(d.allowed for d in decisions)
    assert trips <= 3000 / 10, trips  # thousands of requests a second: leases of tens of units
    # one process: what it reports remaining is exact, its unspent lease not counted as spent
    assert [d.remaining for d in decisions] == [100000 - n for n in range(1, 3001)]
    held = _redis_count(url, prefix, policy, "org-1").current_count - 3000
    assert 0 <= held < 1000  # counted in Redis ahead of use, at most one lease


def test_the_next_lease_is_taken_before_this_one_runs_out(url: str, prefix: str) -> None:
    clock, policy = _Clock(), Policy("organization", parse("100000/minute"))
    budget = _budget(url, prefix, clock, "redis-refill")
    held_at_trips = []
    for _ in range(1000):
        clock.now += 0.001  # 1,000 requests a second: leases of about 50
        key = budget._keys.get(("organization", "org-1"))
        held, before = (key.units if key else 0), _takes("redis-refill")
        assert budget.spend(policy, "org-1").allowed
        if _takes("redis-refill") > before:
            held_at_trips.append(held)
    assert len(held_at_trips) < 1000 / 10
    # after the first leases, every trip was made with units still in hand: no request waited for one
    assert all(held > 0 for held in held_at_trips[3:]), held_at_trips


def _allowed(service: str) -> float:
    return sum(s.value for family in DECISIONS.collect() for s in family.samples
               if s.name.endswith("_total") and s.labels.get("service") == service and s.labels.get("outcome") == "allowed")


def test_decisions_from_leases_reach_the_metric_in_batches(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("100000/minute"))
    budget = _budget(url, prefix, service="redis-metric")
    for n in range(1, 2001):
        budget.spend(policy, "org-1")
        assert n - METRIC_BATCH < _allowed("redis-metric") <= n  # at most a batch behind, never ahead


def test_leases_can_be_turned_off(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("100000/minute"))
    budget = Budget(RedisCounter(url, prefix, 1.0), "redis-no-leases", lease_seconds=0)  # RATE_LIMIT_LEASE_SECONDS=0
    before = _takes("redis-no-leases")
    assert all(budget.spend(policy, "org-1").allowed for _ in range(300))
    assert _takes("redis-no-leases") - before == 300
    assert _redis_count(url, prefix, policy, "org-1").current_count == 300


def test_two_flooding_budgets_report_what_remains_within_their_leases(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("100000/minute"))
    budgets = [_budget(url, prefix, service="redis-two-headers"), _budget(url, prefix, service="redis-two-headers")]
    spent, errors = 0, []
    for n in range(6000):
        decision = budgets[(n // 7) % 2].spend(policy, "org-1")  # in turns of 7, as two workers see a client
        spent += 1
        errors.append(abs(decision.remaining - (100000 - spent)))
    # off by what the other process has spent since its last trip or holds unspent: within 1 % of the quota
    assert max(errors) <= 1000, max(errors)


def test_leases_lapse_when_their_window_ends(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("10000/second"))  # leases of up to 100
    budget = _budget(url, prefix, service="redis-lapse")
    key = None
    for _ in range(5000):  # a flood, stopped while the process holds part of a lease
        budget.spend(policy, "org-1")
        key = budget._keys[("organization", "org-1")]
        if key.units >= 10:
            break
    assert key is not None and key.units >= 10
    window = _redis_count(url, prefix, policy, "org-1")
    time.sleep(max(0.0, window.current_expires_in - 1) + 0.05)  # past the end of the window they were counted in
    before = _takes("redis-lapse")
    decision = budget.spend(policy, "org-1")
    assert decision.allowed and _takes("redis-lapse") - before == 1  # not spent from a lapsed lease: asked again
    assert _redis_count(url, prefix, policy, "org-1").current_count >= 1


def test_a_refusal_is_remembered_until_a_unit_frees_and_no_longer(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("2/second"))
    budget = _budget(url, prefix, service="redis-memo")
    assert [budget.spend(policy, "org-1").allowed for _ in range(2)] == [True, True]
    before = _takes("redis-memo")
    refused: list[Decision] = [budget.spend(policy, "org-1") for _ in range(200)]
    assert not any(d.allowed for d in refused)
    assert _takes("redis-memo") - before == 1  # the first refusal asked; the next 199 did not
    assert all(d.remaining == 0 and d.reset_seconds == 1 for d in refused)
    free_at = time.monotonic() + 1.2
    while not budget.spend(policy, "org-1").allowed:  # served again as soon as Redis would
        assert time.monotonic() < free_at, "still refused after the window ended"
        time.sleep(0.005)
    assert _takes("redis-memo") - before <= 4  # asked again only when the remembered refusal ran out


def test_the_over_budget_flood_of_two_processes_costs_one_trip_each(url: str, prefix: str) -> None:
    policy = Policy("organization", parse("500/minute"))  # leases of up to 5
    budgets = [_budget(url, prefix, service="redis-over"), _budget(url, prefix, service="redis-over")]
    decisions = [budgets[n % 2].spend(policy, "org-1") for n in range(600)]
    assert 500 - 2 * 4 <= sum(d.allowed for d in decisions) <= 500
    before = _takes("redis-over")
    later = [budgets[n % 2].spend(policy, "org-1") for n in range(2000)]
    assert not any(d.allowed for d in later) and all(1 <= d.reset_seconds <= 60 for d in later)
    assert _takes("redis-over") - before <= 2  # refused from memory until the window ends


def test_a_take_is_one_round_trip(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse(LIMIT)
    counter.take(item, 1, "organization", "org-1")  # connects (the handshake is not a take)
    with mock.patch.object(redis.connection.Connection, "send_packed_command",
                           autospec=True, side_effect=redis.connection.Connection.send_packed_command) as sent:
        taken, window = counter.take(item, 5, "organization", "org-1")
    assert sent.call_count == 1
    assert taken == 5 and window.current_count == 6


def test_a_lease_that_does_not_fit_still_takes_the_requests_unit(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse("10/minute")
    assert counter.take(item, 8, "organization", "org-1")[0] == 8
    taken, window = counter.take(item, 8, "organization", "org-1")
    assert taken == 1 and window.current_count == 9
    assert counter.take(item, 1, "organization", "org-1")[0] == 1
    taken, window = counter.take(item, 3, "organization", "org-1")
    assert taken == 0 and window.current_count == 10


def test_scripts_forgotten_by_redis_are_loaded_again(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse(LIMIT)
    storage = counter._storage
    storage.lua_sliding_window.sha = "0" * 40  # as after a restart or a failover: NOSCRIPT
    taken, window = counter.take(item, 1, "organization", "org-1")
    assert taken and window.current_count == 1
    assert storage.lua_sliding_window.sha != "0" * 40


def test_the_window_after_a_refusal(url: str, prefix: str) -> None:
    counter, item = RedisCounter(url, prefix, 1.0), parse("3/minute")
    results = [counter.take(item, 1, "anonymous", "192.0.2.1") for _ in range(4)]
    assert [taken for taken, _ in results] == [1, 1, 1, 0]
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
    taken, window = counter.take(item, 4, "organization", "org-1")
    assert taken == 4 and window.current_count == 4
