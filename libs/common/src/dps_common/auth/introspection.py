"""Key checks for services other than the api: they ask the api, which owns the keys.

``POST {api}/internal/v1/key-introspection`` with the presented key and this service's bearer token
answers in the manner of RFC 7662: ``{"active": true, ...principal}`` or ``{"active": false}``. The
api answers from its database, never from its own cache, so an answer is as fresh as the request
that asked for it; it is cached here for the bounded TTL from that request, and a revoked key stops
working here within the bound measured from the revocation (not one TTL per cache in the way). The
cache is keyed by the key id (the part key events name) and holds a hash of the presented key, never
the key itself. When the api cannot answer, the request fails with 503 and nothing is cached.
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple
from uuid import UUID

import requests

from dps_common.auth.authenticator import INVALID_KEY, MISSING_KEY
from dps_common.auth.cache import TtlCache
from dps_common.auth.keys import parse_key
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.errors import ServiceUnavailable, Unauthorized

INTROSPECTION_PATH = "/internal/v1/key-introspection"
_TIMEOUT_SECONDS = (3, 5)  # connect, read


def principal_to_json(principal: Principal) -> dict[str, Any]:
    return {
        "active": True,
        "organizationId": str(principal.organization_id),
        "organizationName": principal.organization_name,
        "userId": str(principal.user_id),
        "role": principal.role.value,
        "keyId": principal.key_id,
    }


def principal_from_json(body: dict[str, Any]) -> Principal | None:
    if not body.get("active"):
        return None
    return Principal(
        UUID(body["organizationId"]), body["organizationName"], UUID(body["userId"]), Role(body["role"]), body["keyId"]
    )


class Answer(NamedTuple):
    """The api's answer about one presented key: its hash, and who it acts as (None: not active)."""

    digest: str
    principal: Principal | None


class IntrospectingAuthenticator:
    def __init__(self, api_url: str, token: str, cache: TtlCache[Answer], *, verify: str | bool = True):
        self._url = api_url.rstrip("/") + INTROSPECTION_PATH
        self._cache = cache
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
            principal = cached.principal
        else:
            ticket = self._cache.ticket()
            principal = self._introspect(raw_key)
            # one slot per key id: a wrong secret presented under a valid key's id must not evict it
            if cached is None or principal is not None:
                self._cache.put(parsed.key_id, Answer(digest, principal), ticket)
        if principal is None:
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return principal

    def forget(self, key_id: str) -> None:
        self._cache.invalidate(key_id)

    def forget_all(self) -> None:
        self._cache.clear()

    def _introspect(self, raw_key: str) -> Principal | None:
        try:
            resp = self._session.post(self._url, json={"key": raw_key}, timeout=_TIMEOUT_SECONDS)
            resp.raise_for_status()
            return principal_from_json(resp.json())
        except (requests.RequestException, ValueError, KeyError) as exc:
            raise ServiceUnavailable(
                "API keys cannot be checked right now; retry shortly.", code="key_check_unavailable"
            ) from exc
