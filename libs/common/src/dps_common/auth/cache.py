"""Process-local cache of key lookups with a hard time bound.

An entry lives at most ``ttl_seconds`` (the spec allows up to 10 minutes), so a key revoked or
rotated by another process stops working within that bound. ``invalidate`` drops an entry at once;
key changes made in this process call it, so there they take effect immediately.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from dps_common.auth.principal import Principal

MAX_TTL_SECONDS = 600.0
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """What the store knows of an active key: its secret's keyed hash and who it acts as."""

    secret_hash: bytes
    principal: Principal


class TtlCache(Generic[T]):
    def __init__(self, ttl_seconds: float, clock: Callable[[], float] = time.monotonic, max_entries: int = 100_000):
        if not 0 <= ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError(f"cache TTL must be between 0 and {MAX_TTL_SECONDS:g} seconds")
        self._ttl = ttl_seconds
        self._clock = clock
        self._max = max_entries
        self._entries: dict[str, tuple[float, T | None]] = {}
        self._lock = threading.Lock()

    def get(self, key: str, load: Callable[[str], T | None]) -> T | None:
        """The cached value, or ``load(key)`` stored for the TTL (misses are cached too)."""
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            return entry[1]
        value = load(key)
        if self._ttl > 0:
            with self._lock:
                if len(self._entries) >= self._max:
                    self._evict_expired(now)
                self._entries[key] = (now + self._ttl, value)
        return value

    def invalidate(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _evict_expired(self, now: float) -> None:
        for k in [k for k, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[k]
        if len(self._entries) >= self._max:
            self._entries.clear()
