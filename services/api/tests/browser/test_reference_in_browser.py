"""The API reference page in a real browser (headless Chromium): Swagger UI renders the document the
api serves, every operation and every event type listed, with nothing fetched from elsewhere."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from werkzeug.serving import WSGIRequestHandler, make_server

DOCS = "/external/v1/docs"


class _Quiet(WSGIRequestHandler):
    def log_request(self, *args: object, **kwargs: object) -> None:
        pass


@pytest.fixture
def served(app) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_every_operation_and_event_is_listed(served, page, client):
    document = client.simulate_get("/external/v1/openapi.json").json
    operations = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)

    page.goto(served + DOCS)
    page.locator(".opblock").first.wait_for(timeout=30_000)  # a 1.5 MB script on a busy machine
    listed = {
        (block.locator(".opblock-summary-method").inner_text(), block.locator(".opblock-summary-path").get_attribute("data-path"))
        for block in page.locator(".opblock-summary").all()
    }
    assert operations <= listed, sorted(operations - listed)
    for event_type in document["webhooks"]:
        assert page.get_by_text(event_type, exact=True).count() >= 1, event_type
    assert all(url.startswith(served) for url in requested), requested
    assert problems == []
