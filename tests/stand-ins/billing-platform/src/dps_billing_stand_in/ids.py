"""Object ids shaped like Stripe's, and the clock that token, code and idempotency expiries read."""

from __future__ import annotations

import secrets
import string
import threading
import time

_ALPHABET = string.ascii_letters + string.digits

# Lengths of the random part, as Stripe's ids have them (prod_NWjs8kKbJWmuuc, price_1MoBy5LkdIwHu7ixZhnattbh).
_LENGTHS = {"prod": 14, "req": 14, "acct": 16, "ac": 32, "rt": 48}


def new_id(prefix: str, length: int | None = None) -> str:
    size = length if length is not None else _LENGTHS.get(prefix, 24)
    return f"{prefix}_" + "".join(secrets.choice(_ALPHABET) for _ in range(size))


class Clock:
    """Wall-clock time plus an offset tests may advance: it decides expiry only (access tokens after 1 h,
    codes after 5 min, idempotency keys after 24 h). Object timestamps, "in the future" checks and webhook
    signatures use real time, as the connector's own clock does."""

    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._lock:
            self._offset += seconds
