"""Process-local cache of key lookups with a hard time bound.

An entry lives at most ``ttl_seconds`` (the spec allows up to 10 minutes) from the moment its load
began, so a key revoked or rotated by another process stops working within that bound. ``invalidate``
drops an entry at once: key changes made in this process call it, and so do the key events other
processes publish (``dps_common.auth.revocations``), so there they take effect immediately too.

A load that was under way while an entry was invalidated is not stored: it may have read the key
just before the change committed, and storing it would bring the revoked key back for a whole TTL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, NamedTuple, TypeVar

from dps_common.auth.principal import Principal

MAX_TTL_SECONDS = 600.0
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """What the store knows of an active key: its secret's keyed hash, who it acts as, and when it
    stops working (a console credential's absolute end; None: an integration key, until revoked).
    Checked at every use, so no cache serves a key beyond its expiry whatever its TTL."""

    secret_hash: bytes
    principal: Principal
    expires_at: datetime | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and now >= self.expires_at


class Ticket(NamedTuple):
    """Taken before a load: when it began (its entry expires a TTL later) and the invalidations seen."""

    started: float
    generation: int


class TtlCache(Generic[T]):
    def __init__(self, ttl_seconds: float, clock: Callable[[], float] = time.monotonic, max_entries: int = 100_000):
        if not 0 <= ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError(f"cache TTL must be between 0 and {MAX_TTL_SECONDS:g} seconds")
        self._ttl = ttl_seconds
        self._clock = clock
        self._max = max_entries
        self._entries: dict[str, tuple[float, T | None]] = {}
        self._generation = 0  # bumped by every invalidation: loads begun before it are not stored
        self._lock = threading.Lock()

    @property
    def ttl_seconds(self) -> float:
        return self._ttl

    def get(self, key: str, load: Callable[[str], T | None]) -> T | None:
        """The cached value, or ``load(key)`` stored for the TTL (misses are cached too)."""
        now, generation = self._clock(), self._generation  # the ticket, made only for a load (the hot path hits)
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            return entry[1]
        ticket = Ticket(now, generation)
        value = load(key)
        self.put(key, value, ticket)
        return value

    def peek(self, key: str) -> T | None:
        """The live cached value, or None (for caches whose values are never None)."""
        entry = self._entries.get(key)
        return entry[1] if entry is not None and entry[0] > self._clock() else None

    def ticket(self) -> Ticket:
        """Take one before loading a value to ``put``."""
        return Ticket(self._clock(), self._generation)

    def put(self, key: str, value: T | None, ticket: Ticket) -> None:
        """Store ``value`` until a TTL after ``ticket`` was taken, unless something was invalidated
        since (the value may predate that change)."""
        if self._ttl <= 0:
            return
        with self._lock:
            if self._generation != ticket.generation:
                return
            if len(self._entries) >= self._max:
                self._evict_expired(self._clock())
            self._entries[key] = (ticket.started + self._ttl, value)

    def invalidate(self, key: str) -> None:
        with self._lock:
            self._generation += 1
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()

    def _evict_expired(self, now: float) -> None:
        for k in [k for k, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[k]
        if len(self._entries) >= self._max:
            self._entries.clear()
