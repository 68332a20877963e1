"""The public HTTP API as one demo user, over HTTP: ``serving`` puts the app ``build_http`` made on a
loopback port for the seed's run (the standard library's WSGI server, one request at a time), and
``DemoApi`` calls it with requests, as any client of the API would."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import requests

from dps_common.http.app import ServiceApp

PREFIX = "/external/v1"
TIMEOUT_SECONDS = 60  # one call; the seed's largest is a quote of a few lines
Json = dict[str, Any]  # a request or response body


class SeedError(RuntimeError):
    """The API refused a demo object: the seed and the API's contract disagree."""


@dataclass
class Tally:
    created: int = 0
    kept: int = 0


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the base class's name)
        """The app logs every request itself (``Observability``): no second line on stderr."""


@contextmanager
def serving(app: ServiceApp) -> Iterator[str]:
    """``app`` on a free loopback port while the block runs; yields its ``/external/v1`` base URL.
    One request at a time: the seed waits for each answer, so the app's transactions (a test's own,
    bound to one connection) are never used by two threads at once."""
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, name="demo-seed-api", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{PREFIX}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


class DemoApi:
    """``issue_key`` runs on the first call only, so a re-run that finds everything in place issues
    (and later revokes) as few keys as possible."""

    def __init__(self, http: requests.Session, base_url: str, issue_key: Callable[[], str], tally: Tally):
        self._http = http
        self._base_url = base_url
        self._issue_key = issue_key
        self._key: str | None = None
        self._tally = tally

    def call(self, method: str, path: str, body: Mapping[str, object] | None = None, params: dict[str, Any] | None = None) -> Json:
        if self._key is None:
            self._key = self._issue_key()
        headers = {"x-api-key": self._key}
        resp = self._http.request(
            method, self._base_url + path, headers=headers, json=body, params=params, timeout=TIMEOUT_SECONDS
        )
        if resp.status_code not in (200, 201):
            raise SeedError(f"the demo seed failed: {method} {path} answered {resp.status_code}: {resp.text}")
        answer: Json = resp.json()
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
