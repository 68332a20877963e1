"""A page's independent calls to the services go side by side (``adapters.concurrent_calls``): the
endpoint page asks the dispatcher for the endpoint and for its traffic (``/stats``) at once.

Shown without timing: between the console and the real dispatcher, a forwarding server holds the
endpoint's read and its traffic's until both have arrived, and only then passes them on. Made one
after the other, the first is held until the barrier gives up and is answered 504, and the page
fails. Each held call carries the page's request id and the signed-in person's credential."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
import requests

from dps_console.composition import build_http
from dps_console.settings import Settings

from console_helpers import Browser, served

HELD = re.compile(r"^/external/v1/webhook-configs/[0-9a-f-]{36}(/stats)?$")
FORWARDED = ("Accept", "Content-Type", "Idempotency-Key", "x-api-key", "X-Request-Id")
REQUEST_ID = "page-of-the-test-0001"


class HeldUntilBoth:
    """WSGI: forwards every request to ``origin``; while ``holding``, the endpoint's GET and its
    ``/stats`` GET wait for each other (a barrier of two) before they are forwarded."""

    def __init__(self, origin: str):
        self.origin = origin
        self.holding = False
        self.barrier = threading.Barrier(2, timeout=10)
        self.held: list[dict[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
        headers = {name: environ[key] for name in FORWARDED
                   if (key := "HTTP_" + name.upper().replace("-", "_")) in environ or (key := name.upper().replace("-", "_")) in environ}
        if self.holding and method == "GET" and HELD.match(path):
            self.held.append({"path": path, **headers})
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:  # the other call never came while this one waited
                start_response("504 Gateway Timeout", [("Content-Type", "application/json")])
                return [b'{"title": "held: the other call never came"}']
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else None
        query = "?" + environ["QUERY_STRING"] if environ.get("QUERY_STRING") else ""
        answer = requests.request(method, self.origin + path + query, headers=headers, data=body, timeout=30)
        start_response(f"{answer.status_code} {answer.reason}",
                       [(k, v) for k, v in answer.headers.items() if k.lower() in ("content-type", "location")])
        return [answer.content]


@pytest.fixture
def held(webhooks_origin):
    proxy = HeldUntilBoth(webhooks_origin)
    with served(proxy) as origin:
        yield proxy, origin


@pytest.fixture
def admin(held, services_env, tx, mailbox, org) -> Browser:
    _, origin = held
    browser = Browser(build_http(Settings.from_env({**services_env, "WEBHOOKS_URL": origin + "/external/v1"}), tx=tx))
    browser.sign_in(mailbox, org.admin.email)
    return browser


def test_the_endpoint_page_asks_for_the_endpoint_and_its_traffic_at_once(held, admin):
    proxy, _ = held
    admin.open("/console/webhooks/new")
    created = admin.post("/console/webhooks/new", [("url", "https://127.0.0.1:9/hooks"), ("eventTypes", "quote.approved")])
    assert created.status_code == 303, created.text
    endpoint = re.search(r'href="/console/webhooks/([0-9a-f-]{36})"', admin.get(created.headers["location"]).text)
    assert endpoint, "no link to the new endpoint"
    proxy.holding = True
    for window in ("24h", "7d"):
        proxy.held.clear()
        proxy.barrier.reset()
        page = admin.get(f"/console/webhooks/{endpoint.group(1)}?window={window}", headers={"X-Request-Id": REQUEST_ID})
        assert page.status_code == 200, page.text  # one after the other: 504 for the first, the page failed
        assert "https://127.0.0.1:9/hooks" in page.text and 'id="chart-title"' in page.text  # the traffic, not its 'could not be loaded'
        assert sorted(call["path"].endswith("/stats") for call in proxy.held) == [False, True]
        assert {call.get("X-Request-Id") for call in proxy.held} == {REQUEST_ID}  # the page's id on each
        assert all(call.get("x-api-key", "").startswith("dps_") for call in proxy.held)
