"""Random secrets handed to browsers (sign-in links, session cookies) and how they are kept: only
their SHA-256 hash is stored, so a copy of the database signs nobody in."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

TOKEN_BYTES = 32  # 256 bits


def new_token() -> str:
    """256 random bits, URL-safe (43 characters)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def derived_token(key: bytes, *parts: str) -> str:
    """A token of ``new_token``'s shape, the HMAC-SHA256 of ``parts`` under ``key``: the same parts
    give the same token, and nobody without the key can make one."""
    mac = hmac.new(key, "\x1f".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def looks_like_token(value: str | None) -> bool:
    """A value of ``new_token``'s shape; anything else is refused before any lookup."""
    if not value or len(value) != 43:
        return False
    return all(c.isascii() and (c.isalnum() or c in "-_") for c in value)
