"""Key checks for services other than the api: they ask the api, which owns the keys.

``POST {api}/internal/v1/key-introspection`` with the presented key and this service's bearer token
answers in the manner of RFC 7662: ``{"active": true, ...principal}`` or ``{"active": false}``. The
api answers from its database, never from its own cache, so an answer is as fresh as the request
that asked for it; it is cached here for the bounded TTL from that request, and a revoked key stops
working here within the bound measured from the revocation (not one TTL per cache in the way). The
cache is keyed by the key id (the part key events name) and holds a hash of the presented key, never
the key itself. When the api cannot answer, the request fails with 503 and nothing is cached.
The call carries the request's ``X-Request-Id`` (``dps_common.request_id``): the api logs it too.

A console credential (``"console": true``) carries its absolute end (``"expiresAt"``): a cached
answer is never used past it, whatever the TTL. ``"apiKeyAccess"`` says whether the person was
granted API-key access. Both default to false/null when absent (an older api).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

import requests

from dps_common import request_id
from dps_common.auth.authenticator import INVALID_KEY, MISSING_KEY
from dps_common.auth.cache import TtlCache
from dps_common.auth.keys import parse_key
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.clock import utc_now
from dps_common.errors import ServiceUnavailable, Unauthorized

INTROSPECTION_PATH = "/internal/v1/key-introspection"
_TIMEOUT_SECONDS = (3, 5)  # connect, read


def principal_to_json(principal: Principal, expires_at: datetime | None = None) -> dict[str, Any]:
    return {
        "active": True,
        "organizationId": str(principal.organization_id),
        "organizationName": principal.organization_name,
        "userId": str(principal.user_id),
        "role": principal.role.value,
        "keyId": principal.key_id,
        "console": principal.console,
        "apiKeyAccess": principal.api_key_access,
        "expiresAt": None if expires_at is None else expires_at.isoformat(),
    }


def principal_from_json(body: dict[str, Any]) -> Principal | None:
    if not body.get("active"):
        return None
    return Principal(
        UUID(body["organizationId"]),
        body["organizationName"],
        UUID(body["userId"]),
        Role(body["role"]),
        body["keyId"],
        console=body.get("console") is True,
        api_key_access=body.get("apiKeyAccess") is True,
    )


def expiry_from_json(body: dict[str, Any]) -> datetime | None:
    """When an active key stops working (a console credential), or None; an expiry without a
    time zone is refused, not guessed."""
    raw = body.get("expiresAt")
    if raw is None:
        return None
    expires_at = datetime.fromisoformat(raw)
    if expires_at.tzinfo is None:
        raise ValueError("expiresAt without a time zone")
    return expires_at


class Answer(NamedTuple):
    """The api's answer about one presented key: its hash, who it acts as (None: not active), and
    when it stops working (None: until revoked)."""

    digest: str
    principal: Principal | None
    expires_at: datetime | None = None


class IntrospectingAuthenticator:
    def __init__(
        self, api_url: str, token: str, cache: TtlCache[Answer], *, verify: str | bool = True,
        now: Callable[[], datetime] = utc_now,
    ):
        self._url = api_url.rstrip("/") + INTROSPECTION_PATH
        self._cache = cache
        self._now = now
        self._session = requests.Session()  # keep-alive to the api
        self._session.trust_env = False
        self._session.headers["Authorization"] = f"Bearer {token}"
        self._session.verify = verify

    def authenticate(self, raw_key: str | None) -> Principal:
        if raw_key is None:
            raise Unauthorized(MISSING_KEY, code="missing_api_key")
        raw_key = raw_key.strip()
        parsed = parse_key(raw_key)
        if parsed is None:
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        digest = hashlib.sha256(raw_key.encode()).hexdigest()
        cached = self._cache.peek(parsed.key_id)
        if cached is not None and cached.digest == digest:
            answer = cached
        else:
            ticket = self._cache.ticket()
            answer = self._introspect(raw_key, digest)
            # one slot per key id: a wrong secret presented under a valid key's id must not evict it
            if cached is None or answer.principal is not None:
                self._cache.put(parsed.key_id, answer, ticket)
        if answer.principal is None or (answer.expires_at is not None and self._now() >= answer.expires_at):
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return answer.principal

    def forget(self, key_id: str) -> None:
        self._cache.invalidate(key_id)

    def forget_all(self) -> None:
        self._cache.clear()

    def _introspect(self, raw_key: str, digest: str) -> Answer:
        try:
            resp = self._session.post(
                self._url, json={"key": raw_key}, headers=request_id.outgoing_headers(), timeout=_TIMEOUT_SECONDS
            )
            resp.raise_for_status()
            body = resp.json()
            return Answer(digest, principal_from_json(body), expiry_from_json(body))
        except (requests.RequestException, ValueError, KeyError, TypeError) as exc:
            raise ServiceUnavailable(
                "API keys cannot be checked right now; retry shortly.", code="key_check_unavailable"
            ) from exc
