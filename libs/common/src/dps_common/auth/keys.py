"""API key format ``dps_<keyid>_<secret>``: generation, parsing and the keyed hash stored at rest.

The key id finds the row; the secret is never stored, only HMAC-SHA256(pepper, secret), compared in
constant time. A leaked database therefore yields no usable key without the pepper.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

PREFIX = "dps"
_KEY_ID_BYTES = 9  # 12 url-safe characters
_SECRET_BYTES = 32  # 43 url-safe characters


@dataclass(frozen=True, slots=True)
class ParsedKey:
    key_id: str
    secret: str


def generate_key_id() -> str:
    # url-safe alphabet without "_" so the key splits unambiguously
    return secrets.token_urlsafe(_KEY_ID_BYTES).replace("_", "x")


def generate_secret() -> str:
    return secrets.token_urlsafe(_SECRET_BYTES)


def format_key(key_id: str, secret: str) -> str:
    return f"{PREFIX}_{key_id}_{secret}"


def parse_key(raw: str) -> ParsedKey | None:
    """Split a presented key; ``None`` when it is malformed."""
    prefix, sep, rest = raw.partition("_")
    if prefix != PREFIX or not sep:
        return None
    key_id, sep, secret = rest.partition("_")
    if not key_id or not sep or not secret or len(raw) > 200:
        return None
    return ParsedKey(key_id, secret)


def hash_secret(pepper: bytes, secret: str) -> bytes:
    return hmac.digest(pepper, secret.encode(), hashlib.sha256)  # one-shot, in C


def secret_matches(pepper: bytes, secret: str, stored_hash: bytes) -> bool:
    return hmac.compare_digest(hash_secret(pepper, secret), stored_hash)
