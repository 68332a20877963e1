"""The ``state`` of an authorize link: signed (HMAC-SHA256), expiring, bound to the organization,
the admin who asked, the mode (live/test, as Stripe recommends carrying it in ``state``) and the
browser that started the flow (the SHA-256 of its nonce cookie, RFC 6749 section 10.12).

The signature makes it unforgeable; single use comes from the row it names, consumed atomically at
the callback (``services.connection``). Pure functions: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from dps_common.json import dumps, loads


class StateRefused(Exception):
    """``reason`` is ``invalid`` (not ours, or tampered) or ``expired``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class AuthorizeState:
    id: UUID  # the billing_oauth_states row
    organization_id: UUID
    user_id: UUID
    livemode: bool
    expires_at: datetime
    nonce_hash: bytes  # SHA-256 of the nonce in the browser's cookie


def hash_secret(value: str) -> bytes:
    """What is stored of a start ticket or a browser nonce: its SHA-256 (they are 256 random bits)."""
    return hashlib.sha256(value.encode()).digest()


def nonce_matches(state: AuthorizeState, cookies: Sequence[str]) -> bool:
    """One of the browser's cookies of that name (a browser may hold several paths' ones) is the nonce."""
    return any(hmac.compare_digest(hash_secret(cookie), state.nonce_hash) for cookie in cookies if cookie)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, body: str) -> str:
    return _b64(hmac.new(secret, b"billing-oauth-state\x00" + body.encode(), hashlib.sha256).digest())


def sign_state(secret: bytes, state: AuthorizeState) -> str:
    body = _b64(
        dumps(
            {
                "s": str(state.id),
                "o": str(state.organization_id),
                "u": str(state.user_id),
                "m": "live" if state.livemode else "test",
                "e": int(state.expires_at.timestamp()),
                "n": _b64(state.nonce_hash),
            }
        )
    )
    return f"{body}.{_mac(secret, body)}"


def verify_state(secret: bytes, token: str, now: datetime) -> AuthorizeState:
    body, sep, mac = token.partition(".")
    if not sep or not hmac.compare_digest(mac.encode(), _mac(secret, body).encode()):
        raise StateRefused("invalid")
    try:
        fields = loads(_unb64(body))
        state = AuthorizeState(
            id=UUID(fields["s"]),
            organization_id=UUID(fields["o"]),
            user_id=UUID(fields["u"]),
            livemode=fields["m"] == "live",
            expires_at=datetime.fromtimestamp(int(fields["e"]), UTC),
            nonce_hash=_unb64(fields["n"]),
        )
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise StateRefused("invalid") from None
    if state.expires_at <= now:
        raise StateRefused("expired")
    return state
