"""The objects of each connected account, and Stripe's list pagination over them."""

from __future__ import annotations

import copy
import threading
from typing import Any

from .errors import ApiError, invalid
from .params import Params

KINDS = ("product", "price", "quote")


class ObjectStore:
    """Objects by account, kind and id, in creation order. Callers receive copies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self._line_items: dict[str, list[dict[str, Any]]] = {}

    def add(self, account: str, kind: str, obj: dict[str, Any], line_items: list[dict[str, Any]] | None = None) -> None:
        with self._lock:
            by_kind = self._objects.setdefault(account, {}).setdefault(kind, {})
            if obj["id"] in by_kind:
                raise ApiError(400, f"{kind.capitalize()} already exists.", code="resource_already_exists", param="id")
            by_kind[obj["id"]] = copy.deepcopy(obj)
            if line_items is not None:
                self._line_items[obj["id"]] = copy.deepcopy(line_items)

    def get(self, account: str, kind: str, object_id: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._objects.get(account, {}).get(kind, {}).get(object_id)
            return copy.deepcopy(found) if found is not None else None

    def line_items(self, quote_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._line_items.get(quote_id, []))

    def all(self, kind: str, account: str | None = None) -> list[dict[str, Any]]:
        """Oldest first, across accounts unless one is named."""
        with self._lock:
            accounts = [account] if account is not None else list(self._objects)
            found = [obj for acct in accounts for obj in self._objects.get(acct, {}).get(kind, {}).values()]
            return copy.deepcopy(found)

    def find(self, kind: str, object_id: str) -> tuple[str, dict[str, Any]] | None:
        """The account and object with this id, whichever account holds it (the review page)."""
        with self._lock:
            for account, kinds in self._objects.items():
                found = kinds.get(kind, {}).get(object_id)
                if found is not None:
                    return account, copy.deepcopy(found)
        return None


def list_page(params: Params, newest_first: list[dict[str, Any]], kind: str, url: str) -> dict[str, Any]:
    """Stripe's list object: `limit` 1..100 (10 by default), `starting_after` / `ending_before` cursors."""
    limit = params.integer("limit", minimum=1, maximum=100) or 10
    after = params.string("starting_after")
    before = params.string("ending_before")
    if after is not None and before is not None:
        raise ApiError(
            400,
            "You may only specify one of these parameters: ending_before, starting_after.",
            code="parameters_exclusive",
            param="ending_before",
        )
    ids = [obj["id"] for obj in newest_first]
    for cursor, name in ((after, "starting_after"), (before, "ending_before")):
        if cursor is not None and cursor not in ids:
            raise invalid(f"No such {kind}: '{cursor}'", code="resource_missing", param=name)
    if after is not None:
        rest = newest_first[ids.index(after) + 1 :]
        page, has_more = rest[:limit], len(rest) > limit
    elif before is not None:
        rest = newest_first[: ids.index(before)]
        page, has_more = rest[-limit:], len(rest) > limit
    else:
        page, has_more = newest_first[:limit], len(newest_first) > limit
    return {"object": "list", "data": page, "has_more": has_more, "url": url}
