"""Stripe's idempotency: the first answer to a key is stored for 24 hours and replayed; the same key with
other parameters is refused; a key whose first request still runs gets 409. Validation errors and 409s
are not stored; server errors are."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from .errors import ApiError
from .ids import Clock

KEY_MAX = 255
KEY_TTL = 24 * 60 * 60


@dataclass(frozen=True)
class StoredAnswer:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]
    request_id: str


@dataclass
class _Entry:
    endpoint: str
    params: Any
    created_at: float
    answer: StoredAnswer | None = None  # None while the first request runs


class IdempotencyStore:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], _Entry] = {}

    def begin(self, scope: str, key: str, endpoint: str, params: Any) -> StoredAnswer | None:
        """Claims the key for this request (None: go on, then `finish`) or returns the answer to replay."""
        if len(key) > KEY_MAX:
            raise ApiError(
                400,
                f"Idempotency key is {len(key)} characters long, which is longer than the maximum of {KEY_MAX}.",
            )
        now = self._clock.now()
        with self._lock:
            entry = self._entries.get((scope, key))
            if entry is not None and entry.answer is not None and now - entry.created_at >= KEY_TTL:
                entry = None
            if entry is None:
                self._entries[(scope, key)] = _Entry(endpoint=endpoint, params=params, created_at=now)
                return None
            if entry.endpoint != endpoint:
                raise ApiError(
                    400,
                    "Keys for idempotent requests can only be used for the same endpoint they were first used for "
                    f"('{endpoint}' vs '{entry.endpoint}'). Try using a key other than '{key}' if you meant to "
                    "execute a different request.",
                    type="idempotency_error",
                )
            if entry.params != params:
                raise ApiError(
                    400,
                    "Keys for idempotent requests can only be used with the same parameters they were first used "
                    f"with. Try using a key other than '{key}' if you meant to execute a different request.",
                    type="idempotency_error",
                )
            if entry.answer is None:
                raise ApiError(
                    409,
                    f"Idempotency key '{key}': another request with the same key is in progress. Retry after it "
                    "has finished.",
                    type="idempotency_error",
                    code="idempotency_key_in_use",
                )
            return entry.answer

    def finish(self, scope: str, key: str, answer: StoredAnswer | None) -> None:
        """Stores the answer, or forgets the key when the request is not to be stored."""
        with self._lock:
            if answer is None:
                self._entries.pop((scope, key), None)
            else:
                self._entries[(scope, key)].answer = answer

    def expire_all(self) -> None:
        """Forgets every finished key, as 24 hours would (keys still in flight stay claimed)."""
        with self._lock:
            self._entries = {k: e for k, e in self._entries.items() if e.answer is None}
