"""Real slow and malformed clients for the server-edge tests and ``bench/slow_clients.py``: raw sockets
(TLS when the origin is https) against a real server, bounded in count and time.

- ``SlowHeaders``: connections that send a request line, then one header line every ``interval``
  seconds and never finish their head (slowloris).
- ``stalled_bodies``: requests whose head is complete and whose body stops after one byte.
- ``exchange``: one raw request (any bytes) and the response read back, for what a normal client
  library refuses to send (a NUL in a header, a 10 KB request line, a 9 KB header).
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]  # lower-case names; the last of repeated ones
    body: bytes


def connect(origin: str, ca_file: str | None = None, timeout: float = 10) -> socket.socket:
    """A connected socket to ``origin`` (``http://`` or ``https://`` host:port), TLS done."""
    parts = urlsplit(origin)
    host, port = parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)
    sock = socket.create_connection((host, port), timeout=timeout)
    if parts.scheme == "https":
        context = ssl.create_default_context(cafile=ca_file)
        return context.wrap_socket(sock, server_hostname=host)
    return sock


def host_header(origin: str) -> str:
    return urlsplit(origin).netloc


def read_response(sock: socket.socket, timeout: float = 10) -> RawResponse:
    """One HTTP/1.1 response (Content-Length or chunked framing) read from ``sock``."""
    sock.settimeout(timeout)
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError(f"connection closed before a complete response head: {buffer[:200]!r}")
        buffer += data
    head, rest = buffer.split(b"\r\n\r\n", 1)
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body, rest = b"", rest
        while True:
            while b"\r\n" not in rest:
                rest += _recv_more(sock)
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += _recv_more(sock)
            body, rest = body + rest[:size], rest[size + 2 :]
            if size == 0:
                break
    else:
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            rest += _recv_more(sock)
        body = rest[:length]
    return RawResponse(int(status_line.split()[1]), headers, body)


def _recv_more(sock: socket.socket) -> bytes:
    data = sock.recv(65536)
    if not data:
        raise ConnectionError("connection closed in the middle of a response body")
    return data


def exchange(origin: str, ca_file: str | None, request: bytes, timeout: float = 10) -> RawResponse:
    """Send ``request`` as it is on a new connection and read one response."""
    with connect(origin, ca_file, timeout) as sock:
        sock.sendall(request)
        return read_response(sock, timeout)


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (anything it sends first is read)."""
    deadline = time.monotonic() + within
    while (remaining := deadline - time.monotonic()) > 0:
        sock.settimeout(remaining)
        try:
            if not sock.recv(65536):
                return True
        except TimeoutError:
            return False
        except (ConnectionResetError, ssl.SSLError):
            return True
    return False


class SlowHeaders:
    """``count`` connections that each send ``GET path``, then one header line every ``interval``
    seconds, never the blank line that ends the head. A thread drips until ``close()`` (at most
    ``max_seconds``); ``open_count()`` says how many the server has not closed yet."""

    def __init__(self, origin: str, ca_file: str | None, path: str, count: int, interval: float = 1.0,
                 max_seconds: float = 60.0):
        self.sockets: list[socket.socket] = []
        self._closed: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._interval = interval
        self._deadline = time.monotonic() + max_seconds
        start = f"GET {path} HTTP/1.1\r\nHost: {host_header(origin)}\r\n".encode()
        self.sockets = _open_many(origin, ca_file, start, count)
        self._thread = threading.Thread(target=self._drip, name="slow-headers", daemon=True)
        self._thread.start()

    def _drip(self) -> None:
        line = 0
        while not self._stop.wait(self._interval) and time.monotonic() < self._deadline:
            line += 1
            with self._lock:  # open_count() switches sockets to non-blocking for a moment
                for index, sock in enumerate(self.sockets):
                    if index in self._closed:
                        continue
                    try:
                        sock.sendall(f"X-Slow-{line}: {line}\r\n".encode())
                    except OSError:
                        self._closed.add(index)

    def open_count(self) -> int:
        """Connections the server has not closed (a closed one makes a non-blocking read return)."""
        with self._lock:
            for index, sock in enumerate(self.sockets):
                if index not in self._closed and answered_or_closed(sock):
                    self._closed.add(index)
            return len(self.sockets) - len(self._closed)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for sock in self.sockets:
            sock.close()


def _open_many(origin: str, ca_file: str | None, first_bytes: bytes, count: int) -> list[socket.socket]:
    """``count`` connections, each having sent ``first_bytes``; opened 16 at a time (TLS handshakes
    one after another would take longer than the server's deadlines on a busy machine)."""

    def open_one(_: int) -> socket.socket:
        sock = connect(origin, ca_file)
        sock.sendall(first_bytes)
        return sock

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(open_one, range(count)))


def answered_or_closed(sock: socket.socket) -> bool:
    """Whether the server has answered or closed ``sock`` (a non-blocking read returns)."""
    sock.setblocking(False)
    try:
        sock.recv(65536)
        return True  # an answer (the 408) or EOF: the server is done with it
    except (BlockingIOError, ssl.SSLWantReadError):
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


@contextmanager
def slow_headers(origin: str, ca_file: str | None, path: str, count: int, interval: float = 1.0) -> Iterator[SlowHeaders]:
    clients = SlowHeaders(origin, ca_file, path, count, interval)
    try:
        yield clients
    finally:
        clients.close()


@contextmanager
def stalled_bodies(origin: str, ca_file: str | None, path: str, count: int,
                   headers: dict[str, str] | None = None) -> Iterator[list[socket.socket]]:
    """``count`` POSTs to ``path`` announcing a 1,000-byte JSON body and sending one byte of it."""
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host_header(origin)}\r\nContent-Type: application/json\r\n"
        f"Content-Length: 1000\r\n{extra}\r\n{{"
    ).encode()
    sockets = _open_many(origin, ca_file, head, count)
    try:
        yield sockets
    finally:
        for sock in sockets:
            sock.close()
