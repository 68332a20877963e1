"""Opaque keyset cursors, signed by the service and bound to the endpoint and its filters.

A cursor is ``base64url(json position) + "." + base64url(HMAC(secret, scope | position))`` where the
scope names the endpoint and its filters. A forged, tampered or foreign cursor fails the MAC and gives
400. The position is the last item's sort key, so deep pages cost what the first does and items
inserted or removed mid-walk never shift the walk.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import falcon

from dps_common.errors import BadRequest
from dps_common.http.json import dumps, loads
from dps_common.http.operations import Paging


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


def cursor_scope(req: falcon.Request, filters: dict[str, Any] | None = None) -> str:
    """Binds a cursor to the route template and the filters that shape the list."""
    route = req.uri_template or req.path
    params = "&".join(f"{k}={v}" for k, v in sorted((filters or {}).items()) if v is not None)
    return f"{route}?{params}"


def parse_limit(req: falcon.Request, paging: Paging) -> int:
    raw = req.get_param("limit")
    if raw is None:
        return paging.default
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= paging.maximum:
        raise InvalidLimit(f"limit must be an integer between 1 and {paging.maximum}.")
    return int(raw)


def page_request(req: falcon.Request, paging: Paging, codec: CursorCodec, scope: str) -> PageRequest:
    limit = parse_limit(req, paging)
    cursor = req.get_param("cursor")
    return PageRequest(limit, codec.decode(scope, cursor) if cursor else None)


def by_id(item: dict[str, Any]) -> list[Any]:
    """The position of an item in a list ordered by its (creation-ordered UUIDv7) id."""
    return [item["id"]]


def page_response(
    items: list[Any],
    page: PageRequest,
    paging: Paging,
    codec: CursorCodec,
    scope: str,
    position: Callable[[Any], list[Any]] = by_id,
) -> dict[str, Any]:
    """Shape a page fetched with ``limit + 1`` items: the extra item only says whether more follow."""
    has_more = len(items) > page.limit
    items = items[: page.limit]
    next_cursor = codec.encode(scope, position(items[-1])) if has_more and items else None
    return {paging.items_property: items, "nextCursor": next_cursor}


def serve_page(
    req: falcon.Request,
    paging: Paging,
    codec: CursorCodec,
    fetch: Callable[[PageRequest], list[Any]],
    filters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole of a list endpoint's paging: read ``limit``/``cursor`` (bound to the endpoint and
    ``filters``), ``fetch`` up to ``limit + 1`` items after the position, and shape the envelope."""
    scope = cursor_scope(req, filters)
    page = page_request(req, paging, codec, scope)
    return page_response(fetch(page), page, paging, codec, scope)
