"""Resolving a presented API key to a ``Principal``, for every service.

The api's ``Authenticator`` reads its own tables through a ``KeyStore``; other services ask the api
(``dps_common.auth.introspection``); both sit behind a bounded TTL cache, which key events empty at
once (``dps_common.auth.revocations``). The two 401 messages are the spec's, to the letter.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from dps_common.auth.cache import KeyRecord, TtlCache
from dps_common.auth.keys import ParsedKey, parse_key
from dps_common.auth.principal import Principal
from dps_common.clock import utc_now
from dps_common.errors import Unauthorized

MISSING_KEY = "API key is required. Pass it via the x-api-key header."
INVALID_KEY = "Invalid API key."
MAX_VERIFIED = 10_000  # keys remembered as checked, per process (then forgotten all at once)


class KeyStore(Protocol):
    def find(self, key_id: str) -> KeyRecord | None:
        """The active key with this id, or None."""


class KeyAuthenticator(Protocol):
    def authenticate(self, raw_key: str | None) -> Principal:
        """The principal of a presented key; raises ``Unauthorized`` with the spec's message."""


class ForgetsKeys(Protocol):
    """A process's cache of key lookups, as key events reach it."""

    def forget(self, key_id: str) -> None:
        """Drop what is cached for this key id at once (revoked or rotated)."""

    def forget_all(self) -> None:
        """Drop everything cached (key events may have been missed)."""


class Authenticator:
    def __init__(
        self, store: KeyStore, pepper: bytes, cache: TtlCache[KeyRecord], now: Callable[[], datetime] = utc_now
    ):
        self._store = store
        self._pepper = pepper
        # HMAC-SHA256(pepper, ·) with the pepper's pads hashed once: a copy per check costs 1.5 us
        # where ``hmac.digest`` set the key up again each time (2.1 us; every request checks a key)
        self._keyed_hash = hmac.new(pepper, digestmod=hashlib.sha256)
        self._cache = cache
        self._now = now  # an expired key (a console credential past its end) is refused even from the cache
        # Keys that passed the check, by a digest of the key as presented (never the key: no secret
        # outlives its request in memory), with the key id and the cached record checked against.
        self._verified: dict[bytes, tuple[str, KeyRecord]] = {}

    def authenticate(self, raw_key: str | None) -> Principal:
        # A key checked before against the record the cache still holds (the very object): no parse
        # and no HMAC, a client sends the same key on every request. The cache decides as before (its
        # TTL, invalidations) and the expiry is checked each time; a record loaded anew is checked anew.
        if raw_key is None:
            raise Unauthorized(MISSING_KEY, code="missing_api_key")
        presented = hashlib.blake2b(raw_key.encode(), digest_size=32).digest()
        seen = self._verified.get(presented)
        if seen is not None:
            key_id, checked = seen
            record = self._cache.get(key_id, self._store.find)
            if record is checked:
                if record.expires_at is not None and record.expired(self._now()):
                    raise Unauthorized(INVALID_KEY, code="invalid_api_key")  # a console credential past its end
                return record.principal
            # loaded anew (its TTL ended) or gone: checked in full below (pop, not del: the cache's load
            # may have yielded to a greenlet that emptied the memory)
            self._verified.pop(presented, None)
        parsed = self._parse(raw_key)
        record = self._check_parsed(parsed, cached=True)
        if len(self._verified) >= MAX_VERIFIED:
            self._verified.clear()
        self._verified[presented] = (parsed.key_id, record)
        return record.principal

    def authenticate_fresh(self, raw_key: str | None) -> Principal:
        """From the store, never the cache: for key introspection, whose callers cache the answer
        themselves for a TTL from now (an answer from this cache would stretch their bound by the
        age of our entry)."""
        return self._check(raw_key, cached=False).principal

    def record_fresh(self, raw_key: str | None) -> KeyRecord:
        """Like ``authenticate_fresh``, with the key's expiry (introspection hands it on, so the
        caller's cache never outlives a console credential)."""
        return self._check(raw_key, cached=False)

    def _check(self, raw_key: str | None, *, cached: bool) -> KeyRecord:
        return self._check_parsed(self._parse(raw_key), cached=cached)

    def _check_parsed(self, parsed: ParsedKey, *, cached: bool) -> KeyRecord:
        record = self._verify(parsed, self._cache.get(parsed.key_id, self._store.find) if cached
                              else self._store.find(parsed.key_id))
        # a console credential past its end: refused like an unknown key (an integration key has no end)
        if record.expires_at is not None and record.expired(self._now()):
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return record

    @staticmethod
    def _parse(raw_key: str | None) -> ParsedKey:
        if raw_key is None:
            raise Unauthorized(MISSING_KEY, code="missing_api_key")
        parsed = parse_key(raw_key.strip())
        if parsed is None:
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return parsed

    def _verify(self, parsed: ParsedKey, record: KeyRecord | None) -> KeyRecord:
        if record is None or not self._secret_matches(parsed.secret, record.secret_hash):
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return record

    def _secret_matches(self, secret: str, stored_hash: bytes) -> bool:
        """``keys.secret_matches`` with the pepper's pads precomputed: the same HMAC, constant-time compare."""
        keyed = self._keyed_hash.copy()
        keyed.update(secret.encode())
        return hmac.compare_digest(keyed.digest(), stored_hash)

    def forget(self, key_id: str) -> None:
        """Drop a cached lookup at once (a key changed in this process, or a key event)."""
        self._cache.invalidate(key_id)
        self._verified.clear()  # rare; a key checked against a dropped record is checked again anyway

    def forget_all(self) -> None:
        self._cache.clear()
        self._verified.clear()
