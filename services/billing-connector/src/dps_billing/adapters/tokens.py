"""OAuth tokens at rest: AES-256-GCM sealed with the connection row's id as associated data, so a
sealed token copied onto another organization's row does not open."""

from __future__ import annotations

from uuid import UUID

from dps_common.crypto import SecretBox


class TokenSealer:
    def __init__(self, key: bytes):
        self._box = SecretBox(key)

    def seal(self, connection_id: UUID, token: str) -> bytes:
        return self._box.seal(token, connection_id.bytes)

    def open(self, connection_id: UUID, sealed: bytes) -> str:
        return self._box.open(sealed, connection_id.bytes)
