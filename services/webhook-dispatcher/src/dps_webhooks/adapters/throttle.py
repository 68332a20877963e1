"""Where the endpoints' turns are kept (``domain/throttle.py``): Redis, shared by every worker, or
this process alone when no store is configured (REDIS_URL unset: ``memory://``, as the api's rate
limits fall back to).

Why a script of our own: the project's ``limits`` has no GCRA and, like pyrate-limiter's Redis
bucket (a sliding log), only answers "now or not": waiting workers would poll and race for each free
moment, in no order, and a delivery could not be told its turn ten seconds ahead to come back for it.
GCRA's virtual scheduling hands out turns in order and is a few lines on one key: one Lua script, run
atomically by Redis on its own clock (``TIME``), so workers on different hosts agree without
synchronised clocks. The endpoint's key and its tickets share a hash tag (``{endpoint}``): one slot
in a Redis Cluster.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, cast
from uuid import UUID

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from dps_webhooks.domain.throttle import Schedule, Turn, spacing_us, start, take_turn

# take_turn, statement for statement; KEYS: the endpoint's tat, this delivery's ticket; ARGV: the
# spacing and the horizon (microseconds). Keys expire once useless: a tat a second after it passed,
# a ticket a minute after its turn.
_TAKE_TURN = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local spacing, horizon = tonumber(ARGV[1]), tonumber(ARGV[2])
local ticket = tonumber(redis.call('GET', KEYS[2]))
local turn
if ticket and ticket >= now - horizon then
  turn = math.max(ticket, now)
else
  turn = math.max(tonumber(redis.call('GET', KEYS[1])) or 0, now)
  redis.call('SET', KEYS[1], string.format('%d', turn + spacing), 'PX', math.floor((turn + spacing - now) / 1000) + 1000)
end
if turn - now > horizon then
  redis.call('SET', KEYS[2], string.format('%d', turn), 'PX', math.floor((turn - now) / 1000) + 60000)
  return {0, turn - now}
end
if ticket then
  redis.call('DEL', KEYS[2])
end
return {1, turn - now}
"""

# start; KEYS: the endpoint's last start; ARGV: the spacing (microseconds)
_START = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local spacing = tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[1]))
if last and now < last + spacing then
  return last + spacing - now
end
redis.call('SET', KEYS[1], string.format('%d', now), 'PX', math.floor(spacing / 1000) + 1000)
return 0
"""


class Turns(Protocol):
    errors: tuple[type[BaseException], ...]  # what the store raises when it cannot answer
    shared: bool  # kept for every worker (else for this process only)

    def take(self, endpoint_id: UUID, delivery_id: UUID, rate_per_second: int, horizon_us: int) -> Turn:
        """The delivery's turn to be sent to the endpoint at ``rate_per_second`` (``take_turn``)."""

    def start(self, endpoint_id: UUID, rate_per_second: int) -> int:
        """A send to the endpoint starting now: 0, or the microseconds to wait before asking again (``start``)."""


class RedisTurns:
    errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
    shared = True

    def __init__(self, url: str, key_prefix: str, timeout_seconds: float):
        # no retries, short timeouts: an unreachable store costs an attempt thread little (the
        # delivery is put back, services/throttling.py), as the rate limits' counters do
        client = redis.Redis.from_url(
            url.replace("redis+unix://", "unix://", 1),  # limits' scheme for a socket, redis-py's name
            socket_timeout=timeout_seconds,
            socket_connect_timeout=timeout_seconds,
            retry=Retry(NoBackoff(), 0),  # no retry: a failure puts the delivery back at once
        )
        self._take_turn = client.register_script(_TAKE_TURN)  # EVALSHA, loaded again if Redis lost it
        self._start = client.register_script(_START)
        self._prefix = f"{key_prefix}:webhook-throttle"

    def take(self, endpoint_id: UUID, delivery_id: UUID, rate_per_second: int, horizon_us: int) -> Turn:
        endpoint = f"{self._prefix}:{{{endpoint_id}}}"
        now, wait = cast(
            "list[int]",
            self._take_turn(keys=[endpoint, f"{endpoint}:{delivery_id}"], args=[spacing_us(rate_per_second), horizon_us]),
        )
        return Turn(bool(now), int(wait))

    def start(self, endpoint_id: UUID, rate_per_second: int) -> int:
        key = f"{self._prefix}:{{{endpoint_id}}}:started"
        return int(cast(int, self._start(keys=[key], args=[spacing_us(rate_per_second)])))


class LocalTurns:
    """This process's turns: exact for one worker; several workers each keep their own."""

    errors: tuple[type[BaseException], ...] = ()
    shared = False
    _PRUNE_EVERY = 1024  # takes between two sweeps of spent schedules and tickets

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._schedules: dict[UUID, Schedule] = {}
        self._takes = 0

    def take(self, endpoint_id: UUID, delivery_id: UUID, rate_per_second: int, horizon_us: int) -> Turn:
        now = time.monotonic_ns() // 1000
        with self._lock:
            self._takes += 1
            if self._takes % self._PRUNE_EVERY == 0:
                self._prune(now, horizon_us)
            schedule = self._schedules.setdefault(endpoint_id, Schedule())
            return take_turn(schedule, str(delivery_id), now, spacing_us(rate_per_second), horizon_us)

    def start(self, endpoint_id: UUID, rate_per_second: int) -> int:
        now = time.monotonic_ns() // 1000
        with self._lock:
            return start(self._schedules.setdefault(endpoint_id, Schedule()), now, spacing_us(rate_per_second))

    def _prune(self, now: int, horizon_us: int) -> None:
        """Forget what is spent, as the Redis keys expire: passed turns, tickets missed by more than
        the horizon (no longer honoured)."""
        for endpoint_id, schedule in list(self._schedules.items()):
            if schedule.tickets:
                schedule.tickets = {key: turn for key, turn in schedule.tickets.items() if turn >= now - horizon_us}
            if schedule.tat < now and not schedule.tickets and (schedule.last_start or 0) < now - 60_000_000:
                del self._schedules[endpoint_id]


def open_turns(url: str, key_prefix: str, timeout_seconds: float) -> Turns:
    """The store REDIS_URL names (``redis://``, ``rediss://``, ``redis+unix://``), or this process's
    (``memory://``)."""
    if url.startswith("memory://"):
        return LocalTurns()
    return RedisTurns(url, key_prefix, timeout_seconds)
