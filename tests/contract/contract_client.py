"""What the contract tests use to talk to the running api: an HTTPS client, organizations and
members (a user with a key of one role), and the paging walk every list test relies on."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests

from dps_testing.issued_secrets import IssuedSecrets
from dps_testing.provisioning import Member

MISSING_KEY = "API key is required. Pass it via the x-api-key header."
INVALID_KEY = "Invalid API key."


KeyLike = Member | str | None
# The servers close a keep-alive connection after 5 s idle (dps_common.gunicorn_conf.keepalive): a
# request sent on it just then is lost ("Remote end closed connection without response"). A thread
# whose connections have been idle this long starts on new ones.
IDLE_SECONDS = 4.0
# Every secret the suite's clients and browsers were shown, for the secrets scan at the end of the run.
ISSUED = IssuedSecrets()


class Api:
    """HTTPS calls to ``{base_url}{path}``, verified against the test CA, with a key of choice."""

    def __init__(self, origin: str, ca_file: str, prefix: str = "/external/v1"):
        self.origin = origin
        self.base_url = origin + prefix
        self.ca_file = ca_file
        self.headers: dict[str, str] = {}  # sent with every request (a test's own, e.g. Connection: close)
        self._local = threading.local()  # a session per thread: tests call from several at once

    @property
    def session(self) -> requests.Session:
        """This thread's session, a new one when its connections may be closing on the server's side."""
        local, now = self._local, time.monotonic()
        session: requests.Session | None = getattr(local, "session", None)
        if session is None or now - local.used > IDLE_SECONDS:
            if session is not None:
                session.close()
            session = local.session = ISSUED.watch(requests.Session())
            session.trust_env = False  # neither a proxy nor REQUESTS_CA_BUNDLE may stand in for the test CA
        local.used = now
        return session

    def call(self, method: str, path: str, key: KeyLike = None, *, absolute: bool = False, **kwargs: Any) -> requests.Response:
        headers = {**self.headers, **(kwargs.pop("headers", None) or {})}
        if isinstance(key, Member):
            headers["x-api-key"] = key.key
        elif isinstance(key, str):
            headers["x-api-key"] = key
        kwargs.setdefault("timeout", 60)
        kwargs.setdefault("verify", self.ca_file)
        url = (self.origin if absolute else self.base_url) + path
        return self.session.request(method, url, headers=headers, **kwargs)

    def get(self, path: str, key: KeyLike = None, **kwargs: Any) -> requests.Response:
        return self.call("GET", path, key, **kwargs)

    def post(self, path: str, key: KeyLike = None, **kwargs: Any) -> requests.Response:
        return self.call("POST", path, key, **kwargs)

    def patch(self, path: str, key: KeyLike = None, **kwargs: Any) -> requests.Response:
        return self.call("PATCH", path, key, **kwargs)

    def put(self, path: str, key: KeyLike = None, **kwargs: Any) -> requests.Response:
        return self.call("PUT", path, key, **kwargs)

    def delete(self, path: str, key: KeyLike = None, **kwargs: Any) -> requests.Response:
        return self.call("DELETE", path, key, **kwargs)

    def ok(self, method: str, path: str, key: KeyLike, *, status: int | tuple[int, ...] = (200, 201), **kwargs: Any) -> Any:
        """The JSON body of a call that must succeed; a failure shows the server's problem details."""
        resp = self.call(method, path, key, **kwargs)
        expected = (status,) if isinstance(status, int) else status
        assert resp.status_code in expected, f"{method} {path} -> {resp.status_code}: {resp.text[:2000]}"
        return resp.json() if resp.content else None

    def pages(self, path: str, key: KeyLike, items_property: str, *, limit: int | None = None,
              params: dict[str, Any] | None = None, max_pages: int = 1000) -> Iterator[list[dict]]:
        """Each page of a cursor-paged list, checking the envelope on every page."""
        query = dict(params or {})
        if limit is not None:
            query["limit"] = limit
        cursor = None
        for _ in range(max_pages):
            resp = self.get(path, key, params={**query, **({"cursor": cursor} if cursor else {})})
            assert resp.status_code == 200, f"GET {path} -> {resp.status_code}: {resp.text[:2000]}"
            body = resp.json()
            assert "nextCursor" in body, f"nextCursor missing from {path}: {sorted(body)}"
            assert isinstance(body[items_property], list)
            if limit is not None:
                assert len(body[items_property]) <= limit
            yield body[items_property]
            cursor = body["nextCursor"]
            if cursor is None:
                return
            assert isinstance(cursor, str) and cursor
        raise AssertionError(f"{path}: more than {max_pages} pages")

    def walk(self, path: str, key: KeyLike, items_property: str, **kwargs: Any) -> list[dict]:
        """Every item of the list, first page to the page whose nextCursor is null."""
        return [item for page in self.pages(path, key, items_property, **kwargs) for item in page]


def assert_problem(resp: requests.Response, status: int, code: str | None = None) -> dict:
    """An error response: the status, a problem-details JSON body carrying ``code`` and the request id."""
    assert resp.status_code == status, f"expected {status}, got {resp.status_code}: {resp.text[:2000]}"
    assert resp.headers["content-type"].startswith("application/problem+json"), resp.headers["content-type"]
    body = resp.json()
    assert body["status"] == status
    assert isinstance(body["code"], str) and body["code"]
    if code is not None:
        assert body["code"] == code, body
    assert body["requestId"] == resp.headers["X-Request-Id"]
    return body


# --- raw HTTP over TLS (what requests cannot send: a body the server refuses midway) ---------------


def raw_exchange(api: Api, head: str, body_parts, timeout: float = 30) -> bytes:
    """Send a request over TLS part by part and read the answer until the server closes.
    Whatever is not sent is never sent: a server waiting for it would time the read out."""
    origin = urlsplit(api.origin)
    context = ssl.create_default_context(cafile=api.ca_file)
    with socket.create_connection((origin.hostname, origin.port), timeout=timeout) as plain:
        with context.wrap_socket(plain, server_hostname=origin.hostname) as tls:
            tls.sendall(head.encode())
            for part in body_parts:
                tls.sendall(part)
            answer = b""
            while chunk := tls.recv(65536):
                answer += chunk
            return answer


def status_and_body(answer: bytes) -> tuple[int, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def post_head(path: str, key: str, framing: str) -> str:
    return (
        f"POST /external/v1{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: {key}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\nConnection: close\r\n\r\n"
    )
