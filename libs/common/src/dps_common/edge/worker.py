"""The gunicorn worker every service runs: gevent, with read deadlines and problem+json at the edge.

Why gevent (``dps_common.gunicorn_conf`` says more): a connection costs a greenlet (a few KB), not a
thread, so clients that send slowly or not at all cannot use up the workers; each one is still cut
off by the deadlines below.

What this adds to gunicorn's ``GeventWorker`` (HTTP/1.1; ``http_protocols`` stays ``h1``):

- **Deadlines** (``reading.ReadTimeouts``, from the environment): a connection that sends nothing
  is closed after ``header_seconds`` (the first request) or the keep-alive timeout (the next ones);
  a request's head must arrive within ``header_seconds`` of its first byte, and its body with at most
  ``body_idle_seconds`` between reads and ``body_seconds`` in all. A head that does not arrive is
  answered 408 (problem+json) and the connection closed; a body that does not arrive makes the app's
  read fail (``dps_common.http.bodies`` answers 408 and closes). The TLS handshake, when gunicorn
  serves TLS itself, has ``header_seconds`` too.
- **Problem details for the server's own errors** (``problems``): 400, 414, 431 and the rest as
  ``application/problem+json`` instead of gunicorn's HTML; an over-long ``x-api-key`` is 401.
- **``Connection: close`` from the app is honoured**: gunicorn drops hop-by-hop headers from the app
  and would announce keep-alive; a response the app marks ``Connection: close`` (a 413 that leaves
  the body unread, a 408) is sent with it and the connection is then closed, lingering briefly so
  the client reads the answer rather than a reset.
- **A malformed body is the client's error**: gunicorn's errors while the app reads a body (a bad
  chunk size or terminator, a body cut short) reach the app as ``reading.MalformedBody``, which
  ``dps_common.http.bodies`` answers 400 and closes (it was an unhandled error, 500). The 10 MB limit
  on chunked bodies, on every route, is the app's (``dps_common.http.bodies.BodyLimit``).
"""

from __future__ import annotations

import errno
import gc
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

import gevent
from gevent.pool import Pool
from gevent.server import StreamServer
from gevent.socket import wait_read
from gunicorn import http, util
from gunicorn.http import errors as http_errors
from gunicorn.http.wsgi import Response
from gunicorn.sock import ssl_context
from gunicorn.workers.ggevent import GeventWorker

from dps_common.edge import problems
from dps_common.edge.problems import Problem
from dps_common.edge.reading import DeadlineReader, MalformedBody, ReadTimeouts, RequestTimedOut

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

LINGER_SECONDS = 2.0  # after the last answer on a connection closed with unread input
# What a lingering close reads and drops at most: a client still sending an oversized body (the 413
# comes at 10 MB) must finish its write and read the answer, not meet a reset; gunicorn's own cap
# (64 KB) is far below one upload's remainder. The time bound holds either way.
LINGER_BYTES = 32 * 1024 * 1024
# allocations (net of frees) between collections of the youngest generation (CPython's default: 700)
GC_GEN0_THRESHOLD = 20_000


class EdgeWorker(GeventWorker):  # type: ignore[misc]  # gunicorn has no type hints
    """``worker_class = "dps_common.edge.worker.EdgeWorker"``."""

    timeouts = ReadTimeouts()

    def init_process(self) -> None:
        self.timeouts = ReadTimeouts.from_env(os.environ)
        _metrics_know_their_process()
        super().init_process()  # patches the standard library, loads the app, then run()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = _closing_when_asked(getattr(self, "wsgi"))
        settle_heap()

    def run(self) -> None:
        """gunicorn's ``GeventWorker.run``, except that TLS is wrapped in ``_serve`` (its handshake
        then falls under the head deadline; gevent's server would wait for it without one)."""
        context = ssl_context(self.cfg) if self.cfg.is_ssl else None
        servers = []
        for listener in self.sockets:
            listener.setblocking(1)
            server = StreamServer(listener, handle=partial(self._serve, listener, context), spawn=Pool(self.worker_connections))
            if self.cfg.workers > 1:
                server.max_accept = 1  # leave the next connection to another idle worker
            server.start()
            servers.append(server)

        while self.alive:
            self.notify()
            gevent.sleep(1.0)

        for server in servers:  # stop accepting, then let the connections finish until graceful_timeout
            server.close()
        started = time.monotonic()
        while time.monotonic() - started <= self.cfg.graceful_timeout:
            if all(server.pool.free_count() == server.pool.size for server in servers):
                return
            self.notify()
            gevent.sleep(1.0)
        self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
        for server in servers:
            server.stop(timeout=1)

    def _serve(self, listener: socket.socket, context: ssl.SSLContext | None, client: socket.socket, addr: Any) -> None:
        """One client connection: its requests in turn, until it closes, idles or breaks a rule."""
        client.setblocking(True)
        reader: DeadlineReader | None = None
        req = None
        linger = False
        try:
            if context is not None:
                client = context.wrap_socket(
                    client, server_side=True, do_handshake_on_connect=False,
                    suppress_ragged_eofs=self.cfg.suppress_ragged_eofs,
                )
                client.settimeout(self.timeouts.header_seconds)
                client.do_handshake()
            reader = DeadlineReader(client, self.timeouts)
            parser = http.get_parser(self.cfg, reader, addr)
            listener_name = listener.getsockname()
            idle_limit = self.timeouts.header_seconds  # the first request; then the keep-alive timeout
            while self._request_arrives(client, parser, idle_limit):
                idle_limit = self.cfg.keepalive
                reader.expect_head()
                req = None
                req = next(parser)
                reader.expect_body()
                try:
                    self.handle_request(listener_name, req, client, addr)
                except StopIteration:  # the response closes the connection
                    linger = True
                    break
        except RequestTimedOut as exc:
            if exc.phase == "head" and reader is not None and reader.received:
                self._answer(client, problems.REQUEST_TIMEOUT)
                linger = True
        except (StopIteration, http_errors.NoMoreData):
            pass  # the client closed, or the parser found the last request
        except OSError as exc:  # includes TLS errors and a handshake that timed out
            if isinstance(exc, ssl.SSLError) or exc.errno in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, None):
                self.log.debug("Connection ended: %s", exc)
            else:
                self.log.exception("Socket error processing request.")
        except Exception as exc:
            self.handle_error(req, client, addr, exc, head=bytes(reader.head) if reader else b"")
            linger = True
        finally:
            if linger:
                util.close_graceful(client, timeout=LINGER_SECONDS, max_drain=LINGER_BYTES)
            else:
                util.close(client)

    def _request_arrives(self, client: socket.socket, parser: Any, idle_limit: float) -> bool:
        """Whether a request starts within ``idle_limit`` seconds (bytes already read count at once)."""
        if parser.unreader.buf.getbuffer().nbytes or (isinstance(client, ssl.SSLSocket) and client.pending()):
            return True
        try:
            wait_read(client.fileno(), timeout=idle_limit)
        except TimeoutError:
            return False
        return True

    def handle_error(self, req: Any, client: socket.socket, addr: Any, exc: BaseException, head: bytes = b"") -> None:
        """gunicorn's error answer, as problem details (the base class writes HTML)."""
        problem = self._problem_for(exc, head)
        if problem.status >= 500:
            self.log.exception("Error handling request", exc_info=exc)
        else:
            self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        self._answer(client, problem)

    def _problem_for(self, exc: BaseException, head: bytes) -> Problem:
        cfg = self.cfg
        if isinstance(exc, (http_errors.InvalidResponseHeader, http_errors.InvalidResponseHeaderName)):
            return problems.INTERNAL_ERROR  # the app's fault, not the client's
        if isinstance(exc, http_errors.LimitRequestLine):
            return problems.uri_too_long(cfg.limit_request_line)
        if isinstance(exc, http_errors.LimitRequestHeaders):
            if problems.api_key_too_long(head, cfg.limit_request_field_size):
                return problems.INVALID_API_KEY
            return problems.headers_too_large(cfg.limit_request_field_size, cfg.limit_request_fields)
        if isinstance(exc, http_errors.UnsupportedTransferCoding):
            return Problem(501, "Not Implemented", "Not implemented", str(exc), "unsupported_transfer_coding")
        if isinstance(exc, http_errors.ExpectationFailed):
            return Problem(417, "Expectation Failed", "Expectation failed", str(exc), "expectation_failed")
        if isinstance(exc, http_errors.ConfigurationProblem):
            return problems.INTERNAL_ERROR
        if isinstance(exc, http_errors.ParseException):
            return problems.bad_request(f"Malformed request: {exc}")
        return problems.INTERNAL_ERROR

    def _answer(self, client: socket.socket, problem: Problem) -> None:
        try:
            client.settimeout(LINGER_SECONDS)
            client.sendall(problem.response())
        except OSError:
            self.log.debug("Failed to send the error answer.")


def _metrics_know_their_process() -> None:
    """prometheus-client's multiprocess values for this worker (``metrics.worker_value_class``): its
    pid given once (by default every increment asks ``os.getpid()``, a system call, to notice a fork,
    five times a request; a worker does not fork again), no lock (one thread), the record's place in
    the file kept. Runs in the worker, before the app (and its metrics) are loaded; the master never
    imports prometheus_client (``dps_common.edge.metrics``)."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    from prometheus_client import values

    from dps_common.edge import metrics

    values.ValueClass = metrics.worker_value_class(os.getpid())


def settle_heap() -> None:
    """The garbage collector tuned for a server, once the app is built: what the app loaded is frozen
    (``gc.freeze``: moved out of every generation, never scanned again), and the youngest generation
    is collected after ``GC_GEN0_THRESHOLD`` allocations instead of 700.

    Why: a collection stops the whole worker, so every request in flight on it waits. Under load the
    objects of the requests in flight (100 products' rows and dicts each, several greenlets at once)
    passed 700 many times a second: the api collected 150 times per 1,000 product-list requests,
    115 ms of GC per 1,000 requests, and the survivors, promoted, made full collections that scanned
    the app's 130,000 startup objects: 30 ms on an idle core, up to 220 ms on the shared bench
    machine, the product list's p99. With the startup objects frozen and room for the requests in
    flight, it collected none in the same benchmark (bench/README.md, "The tail and the edge").
    Freed objects give their count back, so only cyclic garbage and what lives on reaches the
    threshold: collections still happen, rarely, each over at most that many young objects."""
    gc.collect()  # what the app's start left as garbage is not frozen with it
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])


class _BodyInput:
    """``wsgi.input``: gunicorn's body stream, with its framing errors raised as ``MalformedBody``."""

    _ERRORS = (http_errors.ParseException, http_errors.NoMoreData)

    def __init__(self, body: Any):
        self._body = body

    def read(self, size: int | None = None) -> bytes:
        try:
            return self._body.read(size)  # type: ignore[no-any-return]
        except self._ERRORS as exc:
            raise MalformedBody(_describe(exc)) from exc

    def readline(self, size: int | None = None) -> bytes:
        try:
            return self._body.readline(size)  # type: ignore[no-any-return]
        except self._ERRORS as exc:
            raise MalformedBody(_describe(exc)) from exc

    def readlines(self, hint: int | None = None) -> list[bytes]:
        lines = []
        while line := self.readline():
            lines.append(line)
        return lines

    def __iter__(self) -> _BodyInput:
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def _describe(exc: BaseException) -> str:
    """What broke, without echoing the client's bytes back."""
    if isinstance(exc, http_errors.NoMoreData):
        return "the connection ended before the body did"
    if isinstance(exc, http_errors.InvalidChunkSize):
        return "a chunk size is not a hexadecimal number"
    if isinstance(exc, http_errors.ChunkMissingTerminator):
        return "a chunk does not end with CRLF"
    if isinstance(exc, http_errors.InvalidChunkExtension):
        return "a chunk extension is malformed"
    return "its framing is malformed"


def _closing_when_asked(app: WSGIApplication) -> WSGIApplication:
    """The app, with a ``Connection: close`` it sends making gunicorn close the connection after the
    response (gunicorn drops the app's hop-by-hop headers and decides keep-alive itself), and the body
    stream's framing errors raised as ``MalformedBody``."""

    def wrapped(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        environ["wsgi.input"] = _BodyInput(environ["wsgi.input"])

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
            if _asks_to_close(headers):
                response = getattr(start_response, "__self__", None)
                if isinstance(response, Response):
                    response.force_close()
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return wrapped


def _asks_to_close(headers: list[tuple[str, str]]) -> bool:
    """A ``Connection`` field holding ``close`` (a loop, not a generator: every response passes here)."""
    for name, value in headers:
        if len(name) == 10 and name.lower() == "connection" and "close" in value.lower():
            return True
    return False
