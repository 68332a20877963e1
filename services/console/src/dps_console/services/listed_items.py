"""One item of a service's list, for an operation that has no single-item read (the api's keys and
people): the confirmation pages look the id up in what the person may list."""

from __future__ import annotations

from typing import Any

from dps_console.services.ports import ServiceApi

MAX_PAGES = 50  # of 500 items each, looking for one item


def find_listed(service: ServiceApi, credential: str, path: str, items: str, item_id: str) -> dict[str, Any] | None:
    """The item ``item_id`` of the list at ``path`` (``items``: its array's property) as the service
    lists it to this person; None when not there."""
    params = {"limit": "500"}
    for _ in range(MAX_PAGES):
        answer = service.call("GET", path, credential, params=params) or {}
        found = next((i for i in answer.get(items, []) if isinstance(i, dict) and i.get("id") == item_id), None)
        if found is not None:
            return dict(found)
        if not answer.get("nextCursor"):
            return None
        params = {"limit": "500", "cursor": str(answer["nextCursor"])}
    return None
