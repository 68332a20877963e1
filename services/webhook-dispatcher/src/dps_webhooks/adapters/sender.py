"""One delivery attempt: a POST to the vetted address, bounded in time and in what it reads.

The URL is vetted again before every attempt (DNS may have changed since registration) and the
connection goes to the one address that was vetted, with TLS verified for the URL's host name
(SNI and certificate), so DNS rebinding cannot point the request elsewhere. Redirects are never
followed. The whole attempt, DNS lookup included and however slowly the receiver answers, ends at
the configured timeout (a shared watchdog cuts the socket). The attempt is over when its answer has
been read to its end, or to ``EXCERPT_BYTES`` (the rest is refused, never awaited): a 2xx whose body
is still dripping at the deadline has not finished in time, so it is a timeout like any other.

Connections whose answer was read to the end are kept open per thread and per (host, address,
port) and reused by the next attempt to the same receiver.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Mapping

from dps_webhooks.adapters import watchdog
from dps_webhooks.adapters.url_guard import ResolutionTimedOut, Target, UrlRefused, vet_url
from dps_webhooks.domain.addresses import IPNetwork
from dps_webhooks.domain.attempt_outcome import AttemptResult

EXCERPT_BYTES = 4096
_MAX_IDLE_SECONDS = 30.0
_MAX_KEPT_PER_THREAD = 32
_STALE_ERRORS = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ssl.SSLEOFError)


def tls_context(extra_ca_file: str = "") -> ssl.SSLContext:
    """The system's trusted CAs (plus an extra bundle for private installs and tests)."""
    context = ssl.create_default_context()
    if extra_ca_file:
        context.load_verify_locations(cafile=extra_ca_file)
    return context


class _PinnedConnection(http.client.HTTPConnection):
    """HTTPS to ``target.address`` with the certificate verified for ``target.host``."""

    def __init__(self, target: Target, context: ssl.SSLContext):
        super().__init__(target.address, target.port)
        self.target = target
        self._context = context
        self.cutoff: watchdog.Cutoff | None = None
        self.idle_since = 0.0

    def connect(self) -> None:
        assert self.cutoff is not None
        sock = socket.create_connection((self.host, self.port), self.cutoff.remaining() or 0.001)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.cutoff.attach(sock)
        tls = self._context.wrap_socket(sock, server_hostname=self.target.host, do_handshake_on_connect=False)
        self.cutoff.attach(tls)
        tls.do_handshake()
        self.sock = tls


class Sender:
    """Makes attempts; safe to share between threads (each thread keeps its own connections)."""

    def __init__(self, timeout_seconds: float, allowed_networks: Iterable[IPNetwork] = (), ca_file: str = ""):
        self.timeout_seconds = timeout_seconds
        self._allowed = tuple(allowed_networks)
        self._context = tls_context(ca_file)
        self._local = threading.local()

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> AttemptResult:
        started = time.monotonic()
        status, excerpt, error = self._attempt(url, body, headers)
        duration_ms = round((time.monotonic() - started) * 1000)
        return AttemptResult(status, excerpt, error, duration_ms)

    def _attempt(self, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[int | None, str | None, str | None]:
        cutoff = watchdog.arm(self.timeout_seconds)  # the lookup counts against the attempt's time too
        try:
            try:
                target = vet_url(url, self._allowed, resolve_within=cutoff.remaining())
            except ResolutionTimedOut:
                return None, None, f"Timed out after {self.timeout_seconds:g} s resolving the host."
            except UrlRefused as exc:
                return None, None, f"The URL was refused: {exc}."
            connection, reused = self._connection(target)
            try:
                return self._exchange(connection, target, body, headers, cutoff)
            except _STALE_ERRORS:
                if not reused or cutoff.expired:
                    raise
                # The receiver closed the idle connection as we reused it: once more on a new one.
                connection.close()
                return self._exchange(self._new_connection(target), target, body, headers, cutoff)
        except (OSError, http.client.HTTPException) as exc:
            return None, None, self._describe(exc, cutoff)
        finally:
            cutoff.release()

    def _exchange(
        self,
        connection: _PinnedConnection,
        target: Target,
        body: bytes,
        headers: Mapping[str, str],
        cutoff: watchdog.Cutoff,
    ) -> tuple[int, str, str | None]:
        connection.cutoff = cutoff
        connection.timeout = cutoff.remaining() or 0.001
        if connection.sock is not None:
            cutoff.attach(connection.sock)
            connection.sock.settimeout(connection.timeout)
        try:
            connection.request("POST", target.path_and_query, body=body, headers={**headers, "Host": target.authority})
            response = connection.getresponse()
        except BaseException:
            connection.close()
            raise
        raw, in_time = _read_excerpt(response, cutoff)
        if response.length == 0:
            response.close()  # read to its end; read1 would not have noticed
        finished = in_time and response.isclosed() and not response.will_close and not cutoff.expired
        self._keep(connection) if finished else connection.close()
        if not in_time:
            return response.status, _excerpt(raw), f"Timed out after {self.timeout_seconds:g} s reading the response body."
        return response.status, _excerpt(raw), None

    def _connection(self, target: Target) -> tuple[_PinnedConnection, bool]:
        kept: dict[tuple[str, str, int], _PinnedConnection] = self._kept()
        connection = kept.pop((target.host, target.address, target.port), None)
        if connection is not None:
            if _still_open(connection):
                return connection, True
            connection.close()
        return self._new_connection(target), False

    def _new_connection(self, target: Target) -> _PinnedConnection:
        return _PinnedConnection(target, self._context)

    def _keep(self, connection: _PinnedConnection) -> None:
        kept = self._kept()
        if len(kept) >= _MAX_KEPT_PER_THREAD:
            oldest = min(kept, key=lambda key: kept[key].idle_since)
            kept.pop(oldest).close()
        connection.idle_since = time.monotonic()
        target = connection.target
        kept[(target.host, target.address, target.port)] = connection

    def _kept(self) -> dict[tuple[str, str, int], _PinnedConnection]:
        kept = getattr(self._local, "connections", None)
        if kept is None:
            kept = self._local.connections = {}
        return kept

    def _describe(self, exc: OSError | http.client.HTTPException, cutoff: watchdog.Cutoff) -> str:
        if cutoff.expired or isinstance(exc, TimeoutError):
            return f"Timed out after {self.timeout_seconds:g} s."
        if isinstance(exc, ssl.SSLCertVerificationError):
            return f"TLS error: {str(exc.verify_message).rstrip('.')}."  # OpenSSL's own may end in one
        if isinstance(exc, ssl.SSLError):
            return f"TLS error: {exc.reason or exc}."
        if isinstance(exc, ConnectionRefusedError):
            return "Connection refused."
        if isinstance(exc, ConnectionResetError):
            return "The receiver reset the connection."
        if isinstance(exc, http.client.IncompleteRead):
            return "The receiver closed the connection before the end of its answer."
        if isinstance(exc, http.client.RemoteDisconnected):
            return "The receiver closed the connection without answering."
        if isinstance(exc, http.client.HTTPException):
            return f"Invalid HTTP response: {type(exc).__name__}."
        return f"Connection failed: {exc.strerror or exc}."


def _still_open(connection: _PinnedConnection) -> bool:
    """Idle for not too long, and nothing to read: a closed or chattering socket is not reused."""
    sock = connection.sock
    if sock is None or time.monotonic() - connection.idle_since > _MAX_IDLE_SECONDS:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


def _read_excerpt(response: http.client.HTTPResponse, cutoff: watchdog.Cutoff) -> tuple[bytes, bool]:
    """Up to ``EXCERPT_BYTES`` of the body, and whether it was read to its end (or to that cap) before
    the deadline; cut at the deadline, what had arrived by then. A body that ends before its declared
    length without a deadline is an incomplete answer (``IncompleteRead``)."""
    raw = b""
    try:
        while len(raw) < EXCERPT_BYTES:
            chunk = response.read1(EXCERPT_BYTES - len(raw))
            if not chunk:
                break
            raw += chunk
        else:
            return raw, True  # the cap: the rest is refused, not awaited
        if response.length:
            raise http.client.IncompleteRead(raw, response.length)
    except (OSError, http.client.HTTPException):
        if not cutoff.expired:
            raise
        return raw, False
    # A declared length read to the end is complete even if the deadline fell just after; an answer
    # that ends at end of stream cannot be told from one the watchdog cut, so the deadline decides.
    return raw, response.length == 0 or not cutoff.expired


def _excerpt(raw: bytes) -> str:
    # PostgreSQL text cannot hold NUL.
    return raw.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
