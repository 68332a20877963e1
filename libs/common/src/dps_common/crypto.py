"""Secrets at rest: AES-256-GCM with the owning row's id as associated data, so a ciphertext copied
onto another row does not decrypt. The key comes from configuration (32 bytes, base64)."""

from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_NONCE_BYTES = 12


class SecretBox:
    def __init__(self, key: bytes):
        if len(key) != 32:
            raise ValueError("the encryption key must be 32 bytes (AES-256)")
        self._aead = AESGCM(key)

    @classmethod
    def from_base64(cls, encoded: str) -> "SecretBox":
        return cls(decode_key(encoded))

    def seal(self, plaintext: str, associated: bytes) -> bytes:
        """``nonce || ciphertext+tag``; a fresh random nonce every time."""
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext.encode(), associated)

    def open(self, sealed: bytes, associated: bytes) -> str:
        try:
            return self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], associated).decode()
        except InvalidTag:
            raise ValueError("ciphertext does not match its key or row") from None


def decode_key(encoded: str) -> bytes:
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("must be base64") from None
    if len(key) != 32:
        raise ValueError(f"must decode to 32 bytes, got {len(key)}")
    return key


def new_key() -> str:
    """A fresh base64 key, for ``make run`` and tests."""
    return base64.b64encode(os.urandom(32)).decode()
