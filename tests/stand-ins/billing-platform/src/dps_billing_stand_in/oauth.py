"""Stripe Apps OAuth: one-time codes (5 minutes), access tokens (1 hour), rolling refresh tokens."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .errors import ApiError, OAuthError
from .ids import Clock, new_id

CODE_TTL = 5 * 60
ACCESS_TTL = 60 * 60
REFRESH_TTL = 365 * 86400


def redact(key: str) -> str:
    """How Stripe shows a key in an error: its prefix and last four characters."""
    prefix = key[: key.index("_", 3) + 1] if key.startswith(("sk_", "rk_")) and "_" in key[3:] else key[:3]
    return f"{prefix}****{key[-4:]}" if len(key) > len(prefix) + 4 else "****"


@dataclass
class _Code:
    account: str
    issued_at: float
    grant: str | None = None  # set once exchanged


@dataclass
class _Grant:
    account: str
    refresh_token: str
    refresh_expires_at: float
    access_tokens: list[str] = field(default_factory=list)
    revoked: bool = False


@dataclass
class _Access:
    account: str
    grant: str
    expires_at: float


class OAuthGrants:
    """Installs (accounts the app is installed in) and the grants made by exchanging their codes."""

    def __init__(self, clock: Clock, livemode: bool) -> None:
        self._clock = clock
        self._livemode = livemode
        self._lock = threading.Lock()
        self._installed: dict[str, str] = {}  # account -> its publishable key
        self._codes: dict[str, _Code] = {}
        self._grants: dict[str, _Grant] = {}
        self._refresh: dict[str, str] = {}  # current refresh token -> grant
        self._access: dict[str, _Access] = {}

    def install(self, account: str | None = None) -> tuple[str, str]:
        """Installs the app in `account` (a new one by default) and returns it with a new one-time code."""
        mode = "live" if self._livemode else "test"
        with self._lock:
            account = account or new_id("acct")
            self._installed.setdefault(account, new_id(f"pk_{mode}", 99))
            code = new_id("ac")
            self._codes[code] = _Code(account=account, issued_at=self._clock.now())
            return account, code

    def installed(self) -> list[str]:
        with self._lock:
            return list(self._installed)

    def is_installed(self, account: str) -> bool:
        with self._lock:
            return account in self._installed

    def exchange_code(self, code: str) -> dict[str, Any]:
        with self._lock:
            found = self._codes.get(code)
            if found is None or found.account not in self._installed:
                raise OAuthError("invalid_grant", f"Authorization code does not exist: {redact(code)}")
            if found.grant is not None:
                # Stripe: a code used twice revokes what the first use granted.
                self._revoke(found.grant)
                raise OAuthError(
                    "invalid_grant",
                    f"Authorization code has already been used: {redact(code)}. The grant made with it is revoked.",
                )
            if self._clock.now() - found.issued_at > CODE_TTL:
                raise OAuthError("invalid_grant", f"Authorization code expired: {redact(code)}")
            grant_id = new_id("grant")
            found.grant = grant_id
            self._grants[grant_id] = _Grant(account=found.account, refresh_token="", refresh_expires_at=0.0)
            return self._issue(grant_id)

    def refresh(self, refresh_token: str) -> dict[str, Any]:
        with self._lock:
            grant_id = self._refresh.get(refresh_token)
            grant = self._grants.get(grant_id) if grant_id is not None else None
            if grant_id is None or grant is None or grant.revoked or grant.account not in self._installed:
                raise OAuthError("invalid_grant", f"Invalid refresh token: {redact(refresh_token)}")
            if self._clock.now() > grant.refresh_expires_at:
                raise OAuthError("invalid_grant", f"Refresh token expired: {redact(refresh_token)}")
            return self._issue(grant_id)

    def _issue(self, grant_id: str) -> dict[str, Any]:
        """A new access token and a new refresh token; the old refresh token stops working."""
        grant = self._grants[grant_id]
        self._refresh.pop(grant.refresh_token, None)
        now = self._clock.now()
        mode = "live" if self._livemode else "test"
        access = new_id(f"sk_{mode}", 99)
        grant.refresh_token = new_id("rt")
        grant.refresh_expires_at = now + REFRESH_TTL
        grant.access_tokens.append(access)
        self._refresh[grant.refresh_token] = grant_id
        self._access[access] = _Access(account=grant.account, grant=grant_id, expires_at=now + ACCESS_TTL)
        return {
            "access_token": access,
            "livemode": self._livemode,
            "refresh_token": grant.refresh_token,
            "scope": "stripe_apps",
            "stripe_publishable_key": self._installed[grant.account],
            "stripe_user_id": grant.account,
            "token_type": "bearer",
        }

    def _revoke(self, grant_id: str) -> None:
        grant = self._grants[grant_id]
        grant.revoked = True
        self._refresh.pop(grant.refresh_token, None)
        for token in grant.access_tokens:
            self._access.pop(token, None)

    def account_for(self, token: str) -> str | None:
        """The account an access token acts on; None when it is no access token (or was revoked). Raises
        401 `api_key_expired` when it is one but has expired."""
        with self._lock:
            access = self._access.get(token)
            if access is None:
                return None
            if self._clock.now() >= access.expires_at:
                raise ApiError(401, f"Expired API Key provided: {redact(token)}", code="api_key_expired")
            return access.account

    def uninstall(self, account: str) -> bool:
        """Revokes every grant of the account; False when the app was not installed there."""
        with self._lock:
            if self._installed.pop(account, None) is None:
                return False
            self._codes = {code: c for code, c in self._codes.items() if c.account != account or c.grant is not None}
            for grant_id, grant in self._grants.items():
                if grant.account == account and not grant.revoked:
                    self._revoke(grant_id)
            return True

    def expire_access_tokens(self) -> None:
        with self._lock:
            for access in self._access.values():
                access.expires_at = float("-inf")

    def expire_codes(self) -> None:
        with self._lock:
            for code in self._codes.values():
                code.issued_at = float("-inf")
