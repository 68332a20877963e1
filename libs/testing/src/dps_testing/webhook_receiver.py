"""A real HTTPS webhook receiver for tests and the bench: it verifies every request's Standard
Webhooks signature with the ``standardwebhooks`` package and answers as each test programs it.

    with Receiver(tls_files, secret) as receiver:
        receiver.answer("/flaky", 500, 500, 200)   # one answer per request; the last one repeats
        url = receiver.url("/flaky")
        ...
        [request] = receiver.wait_for(1)

Unprogrammed paths answer by their first segment: ``/500``, ``/302`` (Location to ``/ok``),
``/410``, ``/hang`` (no answer until the receiver closes), ``/drip`` (a byte a second),
``/drip-body`` (a 200 with its headers at once, then its body a byte a second), ``/short-body`` (a body shorter than its Content-Length),
``/reset`` (RST, SO_LINGER 0), ``/huge`` (a 50 MB body); anything else gets 200. An answer is a
status code, one of those mode names, or ``(status, body bytes)``.
"""

from __future__ import annotations

import logging
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from standardwebhooks import Webhook, WebhookVerificationError

log = logging.getLogger(__name__)  # a line per request, as a real receiver's server writes
HUGE_BYTES = 50 * 1024 * 1024
MODES = ("hang", "drip", "drip-body", "short-body", "reset", "huge", "redirect")
DRIP_BODY = b'{"received": true}'
Answer = int | str | tuple[int, bytes]  # a status code, one of MODES, or (status, body)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names lowercased
    body: bytes
    verified: bool  # the signature matched one of the receiver's secrets at arrival
    arrived: float  # time.monotonic()
    client_port: int  # the same port for requests on one kept-alive connection

    @property
    def event_id(self) -> str:
        return self.headers.get("x-service-event-id", "")

    @property
    def attempt(self) -> int:
        return int(self.headers.get("x-service-attempt", "0"))


class Receiver:
    def __init__(self, tls_files: dict[str, str], secrets: str | Iterable[str] = (), *, host: str = "127.0.0.1"):
        self.secrets = [secrets] if isinstance(secrets, str) else list(secrets)
        self.received: list[Received] = []
        self.huge_bytes_sent = 0  # what the /huge answers managed to write before the client left
        self.closing = threading.Event()
        self._answers: dict[str, list[Answer]] = {}
        self._changed = threading.Condition()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(tls_files["cert"], tls_files["key"])
        self._server = _Server((host, 0), _Handler, context, self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="test-receiver", daemon=True)

    # lifecycle

    def __enter__(self) -> "Receiver":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()

    # programming

    def url(self, path: str = "/ok", host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def answer(self, path: str, *answers: Answer) -> None:
        """Answer the next requests on ``path`` in this order; the last answer then repeats."""
        with self._changed:
            self._answers[path] = list(answers)

    def rotate(self, *secrets: str) -> None:
        """Verify with these secrets from now on (two during a cutover)."""
        self.secrets = list(secrets)

    # inspection

    def requests_to(self, path: str) -> list[Received]:
        with self._changed:
            return [request for request in self.received if request.path == path]

    def wait_for(
        self,
        count: int,
        path: str | None = None,
        *,
        timeout: float = 30.0,
        where: Callable[[Received], bool] | None = None,
    ) -> list[Received]:
        """At least ``count`` requests (on ``path``, matching ``where``); AssertionError after ``timeout``."""

        def matching() -> list[Received]:
            return [r for r in self.received if (path is None or r.path == path) and (where is None or where(r))]

        with self._changed:
            if not self._changed.wait_for(lambda: len(matching()) >= count, timeout):
                raise AssertionError(f"expected {count} requests, got {len(matching())}: {self.received!r}")
            return matching()

    # used by the handler

    def _next_answer(self, path: str) -> Answer:
        with self._changed:
            queue = self._answers.get(path)
            if queue:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        first = path.split("?", 1)[0].strip("/").split("/", 1)[0]
        if first.isdigit():
            return int(first)
        return first if first in MODES or first == "302" else 200

    def _record(self, request: Received) -> None:
        with self._changed:
            self.received.append(request)
            self._changed.notify_all()

    def _verify(self, body: bytes, headers: dict[str, str]) -> bool:
        for secret in self.secrets:
            try:
                Webhook(secret).verify(body, headers)
                return True
            except WebhookVerificationError:
                continue
        return False


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], context: ssl.SSLContext, receiver: Receiver
    ) -> None:
        self.context = context
        self.receiver = receiver
        super().__init__(address, handler)

    def finish_request(self: Self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        # TLS in the connection's own thread: a slow handshake never blocks accepting others.
        if not isinstance(request, socket.socket):  # a datagram server's request: never for TCP
            return
        try:
            request.settimeout(30)
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except OSError:
            pass  # the client went away (cut at its deadline, reset)
        finally:
            tls.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real receivers
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        log.info("%s %s", self.address_string(), format % args)

    def do_POST(self) -> None:
        receiver = self.server.receiver
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified = receiver._verify(body, headers)
        received = Received(self.path, headers, body, verified, time.monotonic(), self.client_address[1])
        answer = receiver._next_answer(self.path)
        receiver._record(received)
        if isinstance(answer, tuple):
            self._reply(*answer)
        elif isinstance(answer, int) and answer != 302:
            self._reply(answer, b'{"received": true}' if answer < 300 else b'{"error": "nope"}')
        elif answer in (302, "redirect"):
            self._reply(302, b"", [("Location", f"https://127.0.0.1:{receiver.port}/ok")])
        else:
            getattr(self, f"_{str(answer).replace('-', '_')}")()

    def _reply(self, status: int, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _hang(self) -> None:
        self.server.receiver.closing.wait(120)
        self.close_connection = True

    def _drip(self) -> None:
        self.close_connection = True
        for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
            if self.server.receiver.closing.wait(1.0):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    def _drip_body(self) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(DRIP_BODY)))
        self.end_headers()
        self.wfile.flush()  # the status line and headers leave at once; the body does not
        for byte in DRIP_BODY:
            if self.server.receiver.closing.wait(1.0):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    def _short_body(self) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Length", str(len(DRIP_BODY) + 10))
        self.end_headers()
        self.wfile.write(DRIP_BODY)  # then the connection closes, 10 bytes short

    def _reset(self) -> None:
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()  # the last reference besides the socket itself
        self.connection.close()  # no TLS goodbye, and linger 0: the client gets an RST

    def _huge(self) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        chunk = b"x" * 65536
        for _ in range(HUGE_BYTES // len(chunk)):
            self.wfile.write(chunk)
            self.server.receiver.huge_bytes_sent += len(chunk)
