"""The console's client of the three services (``adapters.backends``) and the services' keep-alive.

A service closes a keep-alive connection idle for ``dps_common.gunicorn_conf.keepalive`` seconds. A
request the console sends on it just as the service closes it is lost, unanswered, and the page says
the service is unavailable. Here the race is held still: a server that, when a request arrives on a
connection idle longer than its keep-alive, closes it without answering (its timer fired as the
request came in), and that otherwise answers and keeps the connection open, as gunicorn does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from dps_common import gunicorn_conf

from dps_console.adapters.backends import IDLE_SECONDS, Backends

KEEP_ALIVE = float(gunicorn_conf.keepalive)  # the services' own


class Answered(list[int]):
    """The client port of each request answered: one port per connection."""


class ClosesIdleConnections(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    answered_at: float | None = None  # of this connection's last answer

    def do_GET(self) -> None:
        if self.answered_at is not None and time.monotonic() - self.answered_at > KEEP_ALIVE:
            self.close_connection = True  # closed as the request came in: no answer
            return
        # Recorded before the answer leaves: the client may read it and look at the record at once.
        answered: Answered = getattr(self.server, "answered")
        answered.append(self.client_address[1])
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.answered_at = time.monotonic()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def service() -> Iterator[tuple[str, Answered]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ClosesIdleConnections)
    server.daemon_threads = True
    answered = Answered()
    setattr(server, "answered", answered)
    thread = threading.Thread(target=server.serve_forever, name="closes-idle-connections", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", answered
    finally:
        server.shutdown()
        server.server_close()


def test_a_connection_the_service_may_be_closing_is_not_used_again(service: tuple[str, Answered]):
    assert IDLE_SECONDS <= KEEP_ALIVE - 1  # a second to spare for an answer on its way, a busy machine
    origin, answered = service
    api = Backends.from_urls(origin, origin, origin, origin, timeout=5).api  # as the composition root makes it
    assert api.call("GET", "/one") == {"ok": True}
    assert api.call("GET", "/two") == {"ok": True}
    assert len(set(answered)) == 1  # one after the other: the same connection, kept alive
    time.sleep(KEEP_ALIVE + 0.2)  # the person reads the page; the service's keep-alive runs out
    assert api.call("GET", "/three") == {"ok": True}  # was ServiceUnavailable: sent on the closing connection
    assert len(set(answered)) == 2  # on a new connection
