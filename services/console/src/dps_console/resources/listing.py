"""Lists filtered by status on the console's side: the api's ``GET /api-keys`` and the dispatcher's
``GET /webhook-configs`` take no status filter, and a revoked key or endpoint is kept (and listed)
for good. The default view leaves the revoked ones out; a filter control shows them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import falcon

NOT_REVOKED = "current"  # the default view: everything but the revoked
EVERY = "all"


@dataclass(frozen=True)
class StatusFilter:
    """The chosen view (``?status=``), the choices offered (value, label), and the page's items."""

    chosen: str
    choices: Sequence[tuple[str, str]]
    shown: list[dict[str, Any]]
    hidden_revoked: int  # revoked items of this page left out of the view

    @property
    def default(self) -> bool:
        return self.chosen == NOT_REVOKED


def filter_by_status(req: falcon.Request, items: list[dict[str, Any]], choices: Sequence[tuple[str, str]],
                     status_of: Callable[[dict[str, Any]], str]) -> StatusFilter:
    """``choices`` are the statuses beside the two views every list has (not revoked; all). An unknown
    ``?status=`` is the default view."""
    offered = [(NOT_REVOKED, "all but revoked"), *choices, (EVERY, "all, revoked included")]
    chosen = req.get_param("status") or NOT_REVOKED
    if chosen not in {value for value, _ in offered}:
        chosen = NOT_REVOKED
    if chosen == EVERY:
        shown = items
    elif chosen == NOT_REVOKED:
        shown = [item for item in items if status_of(item) != "revoked"]
    else:
        shown = [item for item in items if status_of(item) == chosen]
    hidden = sum(1 for item in items if status_of(item) == "revoked") if chosen == NOT_REVOKED else 0
    return StatusFilter(chosen, offered, shown, hidden)


def endpoint_status(endpoint: dict[str, Any]) -> str:
    """An endpoint's status for the filter: ``revoked`` once deleted (the dispatcher keeps it DISABLED
    with ``revokedAt`` set), else its status in lower case."""
    return "revoked" if endpoint.get("revokedAt") else str(endpoint.get("status", "")).lower()


def key_status(key: dict[str, Any]) -> str:
    return str(key.get("status", ""))
