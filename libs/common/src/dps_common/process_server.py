"""Health and Prometheus metrics for a process that serves no HTTP (the outbox relay, the workers), and
``worker_process``: the life of such a process (signals, that server, its start and stop lines).

A stdlib WSGI server on daemon threads, beside the process's own work: ``GET /metrics`` is the
default registry's text (as on the services' own ``/metrics``), ``GET /healthz`` answers 200 while
the process's liveness check finds nothing wrong and 503 with the reason otherwise; other paths are
404 (other methods 405). No log line per scrape or probe (DEBUG only). Off unless a port is set: tests, ``make run`` and
the bench run several of these processes on one host, so only deployments choose a port.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dps_common.json import dumps

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger("dps.process_server")

Liveness = Callable[[], str | None]  # None while alive; otherwise why not, for the 503
MIN_STALE_SECONDS = 30.0
_REQUEST_TIMEOUT_SECONDS = 10  # an idle or slow client's thread goes after this
_JSON = "application/json"
_GET_ONLY = (("Allow", "GET"),)


class Heartbeat:
    """When a loop last turned, for its liveness check. ``beat`` is one clock read and one attribute
    store (cheap on any loop; a float store needs no lock), and ``stalled`` reads it from the server's
    thread. The loop wakes at least every poll interval, so five missed wake-ups (never under 30 s)
    mean it is stuck."""

    def __init__(self, loop: str, poll_interval_seconds: float, *, clock: Callable[[], float] = time.monotonic):
        self.stale_after = max(MIN_STALE_SECONDS, 5 * poll_interval_seconds)
        self._loop = loop
        self._clock = clock
        self._last = clock()

    def beat(self) -> None:
        self._last = self._clock()

    def stalled(self) -> str | None:
        """Why the loop is not alive (it has not turned for too long), or None."""
        idle = self._clock() - self._last
        if idle > self.stale_after:
            return f"the {self._loop} has not turned for {idle:.0f} s"
        return None


class ProcessServer:
    """``/metrics`` and ``/healthz`` on ``host:port`` (bound at construction; port 0 takes a free
    one), served from ``start()`` until ``stop()``."""

    def __init__(self, host: str, port: int, liveness: Liveness):
        self._server = _Server((host, port), _Quiet)
        self._server.set_app(_app(liveness))
        self._thread = threading.Thread(target=self._server.serve_forever, name="process-server", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> None:
        self._thread.start()
        log.info("health and metrics served", extra={"address": self._server.server_address[0], "port": self.port})

    def stop(self) -> None:
        """Stop accepting, close the socket and wait for the serving thread (at most half a second)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


@contextmanager
def serve_health_and_metrics(host: str, port: int, liveness: Liveness) -> Iterator[ProcessServer | None]:
    """A ``ProcessServer`` on ``host:port`` for the block, stopped at its end; none when ``port`` is 0."""
    if not port:
        yield None
        return
    server = ProcessServer(host, port, liveness)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def worker_process(
    name: str, process_log: logging.Logger, stop: Callable[[], None], host: str, port: int, liveness: Liveness,
    **started: object,
) -> Iterator[None]:
    """The block is the process's work, run on the main thread: SIGTERM or SIGINT call ``stop`` (which
    only sets flags, the block then winds down and returns), ``/healthz`` and ``/metrics`` are served on
    ``host:port`` meanwhile (not when ``port`` is 0), and ``process_log`` has a line when it starts
    (``started`` as its fields) and one once the block is done (with the signal that stopped it). The
    handler itself logs nothing: a write to the stream the main thread was writing to when the signal
    came would raise (a reentrant call). The former handlers are back after the block."""
    signalled: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        signalled.append(signum)
        stop()

    former = {signum: signal.signal(signum, on_signal) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        process_log.info(f"{name} started", extra=started)
        with serve_health_and_metrics(host, port, liveness):
            yield
        process_log.info(f"{name} stopped", extra={"signal": signalled[0]} if signalled else {})
    finally:
        for signum, handler in former.items():
            signal.signal(signum, handler)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a scraper that never finishes does not keep the process alive

    def __init__(self, address: tuple[str, int], handler: type[WSGIRequestHandler]):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)


class _Quiet(WSGIRequestHandler):
    """No access line on stderr for every scrape and probe: at DEBUG, through logging."""

    timeout = _REQUEST_TIMEOUT_SECONDS

    def log_message(self, format: str, *args: object) -> None:
        log.debug("process server request", extra={"request": format % args})


def _app(liveness: Liveness) -> WSGIApplication:
    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path not in ("/metrics", "/healthz"):
            return _respond(start_response, "404 Not Found", _JSON, dumps({"status": "not found"}))
        if environ["REQUEST_METHOD"] != "GET":
            return _respond(start_response, "405 Method Not Allowed", _JSON, dumps({"status": "GET only"}), _GET_ONLY)
        if path == "/metrics":
            return _respond(start_response, "200 OK", CONTENT_TYPE_LATEST, generate_latest())
        reason = _not_alive(liveness)
        if reason is None:
            return _respond(start_response, "200 OK", _JSON, dumps({"status": "ok"}))
        body = dumps({"status": "unavailable", "reason": reason})
        return _respond(start_response, "503 Service Unavailable", _JSON, body)

    return app


def _not_alive(liveness: Liveness) -> str | None:
    try:
        return liveness()
    except Exception as exc:  # a check that breaks says nothing good about the process
        log.exception("liveness check failed")
        return f"the liveness check failed: {type(exc).__name__}"


def _respond(
    start_response: StartResponse, status: str, content_type: str, body: bytes, headers: Iterable[tuple[str, str]] = ()
) -> list[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body))), *headers])
    return [body]
