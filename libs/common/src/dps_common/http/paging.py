"""A list endpoint's paging over HTTP: read ``limit`` and ``cursor`` (a ``dps_common.paging`` cursor
bound to the organization, the route and its filters), fetch ``limit + 1`` items, shape the envelope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from dps_common.http.operations import Paging
from dps_common.paging import CursorCodec, InvalidLimit, PageRequest


def cursor_scope(req: falcon.Request, filters: dict[str, Any] | None = None) -> str:
    """Binds a cursor to the caller's organization, the route template and the filters that shape
    the list: another organization's cursor is one this service did not issue to the caller."""
    principal = getattr(req.context, "principal", None)
    organization = principal.organization_id if principal is not None else ""
    route = req.uri_template or req.path
    params = "&".join(f"{k}={v}" for k, v in sorted((filters or {}).items()) if v is not None)
    return f"{organization}:{route}?{params}"


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
