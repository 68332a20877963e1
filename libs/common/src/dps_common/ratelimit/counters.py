"""The counters behind the budgets: ``limits``' sliding window counter, in Redis or in this process.

Strategy: the sliding window counter, not the moving window. The moving window keeps one timestamp
per request (memory and Lua work grow with the limit), while the sliding window counter keeps two
integers per key (this window's count and the last one's, weighted by how much of it still overlaps
the window) and costs the same at any limit. Its approximation assumes the last window's requests
were spread evenly, which errs by a fraction of a percent in practice and never lets a burst at a
window boundary double the limit, as a fixed window would.

One round trip per take: ``limits``' Redis storage takes units with one Lua script and reads the
window with another, so this sends them in one pipeline (the window read after the take reflects
it) instead of calling ``hit`` and then ``get_window_stats``.

A take asks for ``amount`` units (a lease, ``dps_common.ratelimit.budget``): one for the request at
hand and, if the window has room for them too, ``amount - 1`` more in the same pipeline. ``limits``'
script takes all it is asked for or nothing, so asking for the two parts separately is what lets a
take near the end of the budget still serve its request; no script of our own is needed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol, cast

import redis
from limits import RateLimitItem
from limits.storage import MemoryStorage, RedisStorage
from redis.backoff import NoBackoff
from redis.retry import Retry


@dataclass(frozen=True, slots=True)
class Window:
    """A key's sliding window right after a take, as ``limits``' storages report it."""

    previous_count: int
    previous_expires_in: float  # seconds until the last window stops weighing (its weight: this / expiry)
    current_count: int
    current_expires_in: float  # seconds until this window's count is dropped: its end + one expiry


class Counter(Protocol):
    errors: tuple[type[BaseException], ...]  # what the store raises when it cannot answer
    shared: bool  # counted outside this process (a round trip worth saving with leases)

    def take(self, item: RateLimitItem, amount: int, *identifiers: str) -> tuple[int, Window]:
        """Takes one unit if the window has room, and ``amount - 1`` more if it has room for them as
        well; answers how many it took (0, 1 or ``amount``) and the window after."""


class LocalCounter:
    """Per process (``memory://``): the fallback when no shared store is configured."""

    errors: tuple[type[BaseException], ...] = ()
    shared = False

    def __init__(self) -> None:
        self._storage = MemoryStorage()
        self._lock = threading.Lock()  # the take and the read together, as Redis runs them

    def take(self, item: RateLimitItem, amount: int, *identifiers: str) -> tuple[int, Window]:
        key, expiry = item.key_for(*identifiers), item.get_expiry()
        with self._lock:
            taken = int(self._storage.acquire_sliding_window_entry(key, item.amount, expiry))
            if taken and amount > 1 and self._storage.acquire_sliding_window_entry(key, item.amount, expiry, amount - 1):
                taken = amount
            return taken, Window(*self._storage.get_sliding_window(key, expiry))


class _Storage(RedisStorage):
    """``limits``' Redis storage, with its two sliding-window scripts sent in one pipeline."""

    def take_and_read(self, key: str, limit: int, expiry: int, amount: int) -> tuple[int, Window]:
        keys = [self.prefixed_key(self._previous_window_key(key)), self.prefixed_key(self._current_window_key(key))]
        pipe = self._client().pipeline(transaction=False)
        pipe.evalsha(self.lua_acquire_sliding_window.sha, 2, *keys, limit, expiry, 1)
        if amount > 1:  # the rest of the lease, taken only if it fits as a whole
            pipe.evalsha(self.lua_acquire_sliding_window.sha, 2, *keys, limit, expiry, amount - 1)
        pipe.evalsha(self.lua_sliding_window.sha, 2, *keys, expiry)
        # evalsha rather than the Script objects: a pipeline given Script objects asks the server
        # whether it knows them (SCRIPT EXISTS) before every execute, a second round trip
        *takes, window = pipe.execute(raise_on_error=False)
        if isinstance(takes[0], redis.exceptions.NoScriptError):  # a restarted or failed-over Redis: nothing taken
            self._reload()  # (the lease's part runs the same script: it failed as well)
            return self.take_and_read(key, limit, expiry, amount)
        if isinstance(window, redis.exceptions.NoScriptError):  # taken, but the read's script was missing
            self._reload()
            window = self.lua_sliding_window(keys, [expiry])
        for result in (*takes, window):
            if isinstance(result, Exception):
                raise result
        taken = int(bool(takes[0])) + (amount - 1 if len(takes) > 1 and takes[1] else 0)
        return taken, Window(
            int(window[0] or 0),
            max(0.0, float(window[1] or 0)) / 1000,
            int(window[2] or 0),
            max(0.0, float(window[3] or 0)) / 1000,
        )

    def _reload(self) -> None:
        for script in (self.lua_acquire_sliding_window, self.lua_sliding_window):
            script.sha = str(self._client().script_load(script.script))

    def _client(self) -> redis.Redis:
        return cast(redis.Redis, self.storage)


class RedisCounter:
    """Shared by every process and replica that names the same Redis and key prefix."""

    errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
    shared = True

    def __init__(self, url: str, key_prefix: str, timeout_seconds: float):
        # no retries and short timeouts: an unreachable store must cost a request little (it then
        # fails open), and a retry with back-off would hold the request for seconds
        self._storage = _Storage(
            url,
            key_prefix=key_prefix,
            socket_timeout=timeout_seconds,
            socket_connect_timeout=timeout_seconds,
            retry=Retry(NoBackoff(), 0),  # type: ignore[arg-type]  # passed on to redis.Redis, which takes it
        )

    def take(self, item: RateLimitItem, amount: int, *identifiers: str) -> tuple[int, Window]:
        return self._storage.take_and_read(item.key_for(*identifiers), item.amount, item.get_expiry(), amount)

    def clear(self, item: RateLimitItem, *identifiers: str) -> None:
        """Forget a key's counts (tests, and an operator lifting a block)."""
        self._storage.clear_sliding_window(item.key_for(*identifiers), item.get_expiry())


def open_counter(url: str, key_prefix: str, timeout_seconds: float) -> Counter:
    """The counter a storage URL names: ``redis://...`` (shared) or ``memory://`` (this process)."""
    if url.startswith("memory://"):
        return LocalCounter()
    return RedisCounter(url, key_prefix, timeout_seconds)
