"""Endpoint signing secrets: Standard Webhooks ``whsec_`` secrets, sealed at rest.

The secret is shown once (at creation and rotation) and otherwise exists only AES-GCM sealed under
the configured key, bound to its endpoint's id, so a sealed value copied onto another row is useless.
"""

from __future__ import annotations

import base64
import secrets
from uuid import UUID

from dps_common.crypto import SecretBox

PREFIX = "whsec_"
_SECRET_BYTES = 32  # Standard Webhooks: between 24 and 64 bytes


def new_signing_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


class SecretSealer:
    def __init__(self, key: bytes):
        self._box = SecretBox(key)

    def seal(self, endpoint_id: UUID, secret: str) -> bytes:
        return self._box.seal(secret, endpoint_id.bytes)

    def open(self, endpoint_id: UUID, sealed: bytes) -> str:
        return self._box.open(sealed, endpoint_id.bytes)
