"""The counters behind the budgets: ``limits``' sliding window counter, in Redis or in this process.

Strategy: the sliding window counter, not the moving window. The moving window keeps one timestamp
per request (memory and Lua work grow with the limit), while the sliding window counter keeps two
integers per key (this window's count and the last one's, weighted by how much of it still overlaps
the window) and costs the same at any limit. Its approximation assumes the last window's requests
were spread evenly, which errs by a fraction of a percent in practice and never lets a burst at a
window boundary double the limit, as a fixed window would.

One round trip per request: ``limits``' Redis storage takes a unit with one Lua script and reads the
window with another, so this sends both in one pipeline (the window read after the take reflects
it) instead of calling ``hit`` and then ``get_window_stats``.
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

    def take(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, Window]:
        """Takes one unit if the window has room; answers whether it did and the window after."""


class LocalCounter:
    """Per process (``memory://``): the fallback when no shared store is configured."""

    errors: tuple[type[BaseException], ...] = ()

    def __init__(self) -> None:
        self._storage = MemoryStorage()
        self._lock = threading.Lock()  # the take and the read together, as Redis runs them

    def take(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, Window]:
        key, expiry = item.key_for(*identifiers), item.get_expiry()
        with self._lock:
            taken = self._storage.acquire_sliding_window_entry(key, item.amount, expiry)
            return taken, Window(*self._storage.get_sliding_window(key, expiry))


class _Storage(RedisStorage):
    """``limits``' Redis storage, with its two sliding-window scripts sent in one pipeline."""

    def take_and_read(self, key: str, limit: int, expiry: int) -> tuple[bool, Window]:
        keys = [self.prefixed_key(self._previous_window_key(key)), self.prefixed_key(self._current_window_key(key))]
        pipe = self._client().pipeline(transaction=False)
        pipe.evalsha(self.lua_acquire_sliding_window.sha, 2, *keys, limit, expiry, 1)
        pipe.evalsha(self.lua_sliding_window.sha, 2, *keys, expiry)
        # evalsha rather than the Script objects: a pipeline given Script objects asks the server
        # whether it knows them (SCRIPT EXISTS) before every execute, a second round trip
        taken, window = pipe.execute(raise_on_error=False)
        if isinstance(taken, redis.exceptions.NoScriptError):  # a restarted or failed-over Redis: nothing taken
            self._reload()
            return self.take_and_read(key, limit, expiry)
        if isinstance(window, redis.exceptions.NoScriptError):  # taken, but the read's script was missing
            self._reload()
            window = self.lua_sliding_window(keys, [expiry])
        for result in (taken, window):
            if isinstance(result, Exception):
                raise result
        return bool(taken), Window(
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

    def take(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, Window]:
        return self._storage.take_and_read(item.key_for(*identifiers), item.amount, item.get_expiry())

    def clear(self, item: RateLimitItem, *identifiers: str) -> None:
        """Forget a key's counts (tests, and an operator lifting a block)."""
        self._storage.clear_sliding_window(item.key_for(*identifiers), item.get_expiry())


def open_counter(url: str, key_prefix: str, timeout_seconds: float) -> Counter:
    """The counter a storage URL names: ``redis://...`` (shared) or ``memory://`` (this process)."""
    if url.startswith("memory://"):
        return LocalCounter()
    return RedisCounter(url, key_prefix, timeout_seconds)
