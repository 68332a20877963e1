"""Keys derived from the one configured CONSOLE_SECRET_KEY (HKDF-SHA256, one label per use): the
CSRF tokens' HMAC key, the AES-256-GCM key sealing console credentials, the one sealing a
secret on its way across a redirect (``services.form_results``) and the HMAC key of the inline
forms' one-time tokens (``resources.web.Renderer``)."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


def derive(secret_key: bytes, label: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"dps-console:{label}".encode()).derive(secret_key)


@dataclass(frozen=True)
class ConsoleKeys:
    csrf: bytes
    credentials: bytes
    shown_once: bytes
    inline_forms: bytes

    @classmethod
    def from_secret(cls, secret_key: bytes) -> "ConsoleKeys":
        return cls(csrf=derive(secret_key, "csrf"), credentials=derive(secret_key, "credentials"),
                   shown_once=derive(secret_key, "shown-once"), inline_forms=derive(secret_key, "inline-forms"))
