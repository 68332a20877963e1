"""The public HTTP API in-process (falcon's test client over ``create_app``), as one demo user."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import falcon.testing

PREFIX = "/external/v1"
Json = dict[str, Any]  # a request or response body


class SeedError(RuntimeError):
    """The API refused a demo object: the seed and the API's contract disagree."""


@dataclass
class Tally:
    created: int = 0
    kept: int = 0


class DemoApi:
    """``issue_key`` runs on the first call only, so a re-run that finds everything in place issues
    (and later revokes) as few keys as possible."""

    def __init__(self, client: falcon.testing.TestClient, issue_key: Callable[[], str], tally: Tally):
        self._client = client
        self._issue_key = issue_key
        self._key: str | None = None
        self._tally = tally

    def call(self, method: str, path: str, body: Mapping[str, object] | None = None, params: dict[str, Any] | None = None) -> Json:
        if self._key is None:
            self._key = self._issue_key()
        headers = {"x-api-key": self._key}
        resp = self._client.simulate_request(method, PREFIX + path, headers=headers, json=body, params=params)
        if resp.status_code not in (200, 201):
            raise SeedError(f"the demo seed failed: {method} {path} answered {resp.status_code}: {resp.text}")
        answer: Json = resp.json
        return answer

    def walk(self, path: str, collection: str, **filters: Any) -> Iterator[Json]:
        params: dict[str, Any] = {**filters, "limit": 100}
        while True:
            page = self.call("GET", path, params=params)
            yield from page[collection]
            if page["nextCursor"] is None:
                return
            params["cursor"] = page["nextCursor"]

    def find(self, path: str, collection: str, match: Callable[[Json], bool], **filters: Any) -> Json | None:
        return next((item for item in self.walk(path, collection, **filters) if match(item)), None)

    def ensure(self, path: str, collection: str, match: Callable[[Json], bool], body: Mapping[str, object], **filters: Any) -> Json:
        """The first listed item ``match`` accepts, else the one created from ``body``."""
        found = self.find(path, collection, match, **filters)
        if found is not None:
            self._tally.kept += 1
            return found
        self._tally.created += 1
        return self.call("POST", path, body)

    def named(self, path: str, collection: str, body: Mapping[str, object], **filters: Any) -> Json:
        return self.ensure(path, collection, lambda item: item["name"] == body["name"], body, **filters)
