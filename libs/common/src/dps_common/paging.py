"""Opaque keyset cursors, signed by the service and bound to the caller, the endpoint and its filters.

A cursor is ``base64url(json position) + "." + base64url(HMAC(secret, scope | position))`` where the
scope names the caller's organization, the endpoint and its filters. A forged, tampered or foreign
cursor (another list's, another filter's, another organization's) fails the MAC and gives 400. The
position is the last item's sort key, so deep pages cost what the first does and items inserted or
removed mid-walk never shift the walk. (The HTTP side, reading ``limit`` and ``cursor``, binding the
scope and shaping the envelope, is ``dps_common.http.paging``.)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dps_common.errors import BadRequest
from dps_common.json import dumps, loads


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class InvalidCursor(BadRequest):
    code = "invalid_cursor"


class InvalidLimit(BadRequest):
    code = "invalid_limit"


@dataclass(frozen=True, slots=True)
class PageRequest:
    limit: int
    after: list[Any] | None  # the sort key of the last item already seen, or None for the first page


class CursorCodec:
    def __init__(self, secret: bytes):
        self._secret = secret

    def _mac(self, scope: str, body: str) -> str:
        digest = hmac.new(self._secret, f"{scope}\x00{body}".encode(), hashlib.sha256).digest()
        return _b64(digest[:18])

    def encode(self, scope: str, position: Sequence[Any]) -> str:
        body = _b64(dumps(list(position)))
        return f"{body}.{self._mac(scope, body)}"

    def decode(self, scope: str, cursor: str) -> list[Any]:
        body, sep, mac = cursor.partition(".")
        if not sep or not hmac.compare_digest(mac.encode(), self._mac(scope, body).encode()):
            raise InvalidCursor("The cursor was not issued by this service for this list and its filters.")
        try:
            position = loads(_unb64(body))
        except ValueError:
            raise InvalidCursor("The cursor is malformed.") from None
        if not isinstance(position, list):
            raise InvalidCursor("The cursor is malformed.")
        return position
