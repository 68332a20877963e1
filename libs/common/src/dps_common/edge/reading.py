"""Read deadlines on a client connection: how long a request's head and its body may take to arrive.

A client that stops sending, or sends a byte now and then, must not hold the server's resources: the
head (request line and headers) has ``header_seconds`` from its first byte, and a body at most
``body_idle_seconds`` between two reads and ``body_seconds`` in all. gunicorn's parser reads the
connection through ``DeadlineReader.recv`` only, so these bounds hold for everything it reads: the
head, the body the app reads, and the unread rest of a body it discards before the next request.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

Phase = Literal["head", "body"]
HEAD_RECORD_BYTES = 64 * 1024  # enough of a head to tell which header broke a limit


@dataclass(frozen=True)
class ReadTimeouts:
    header_seconds: float = 5.0
    body_idle_seconds: float = 5.0
    body_seconds: float = 60.0  # 10 MB (the largest body) at about 1.4 Mbit/s

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ReadTimeouts:
        """``HTTP_HEADER_TIMEOUT_SECONDS``, ``HTTP_BODY_IDLE_TIMEOUT_SECONDS``, ``HTTP_BODY_TIMEOUT_SECONDS``."""
        defaults = cls()

        def seconds(name: str, default: float) -> float:
            text = env.get(name, "").strip()
            if not text:
                return default
            value = float(text)
            if not 0 < value < 3600:
                raise ValueError(f"{name} must be a number of seconds between 0 and 3600, got {text!r}")
            return value

        return cls(
            seconds("HTTP_HEADER_TIMEOUT_SECONDS", defaults.header_seconds),
            seconds("HTTP_BODY_IDLE_TIMEOUT_SECONDS", defaults.body_idle_seconds),
            seconds("HTTP_BODY_TIMEOUT_SECONDS", defaults.body_seconds),
        )


class RequestTimedOut(TimeoutError):
    """The client did not send the request's head, or its body, within its deadline."""

    def __init__(self, phase: Phase):
        super().__init__(f"the request's {phase} did not arrive in time")
        self.phase: Phase = phase


class MalformedBody(ValueError):
    """The request body's framing is broken (a bad chunk size or terminator, or the connection ended
    before the body did): the app answers 400 and closes, since where the next request starts is unknown.
    The worker raises it from the body stream in place of gunicorn's own errors, so the app needs no
    knowledge of gunicorn."""


class _Socket(Protocol):
    def recv(self, size: int, /) -> bytes: ...

    def settimeout(self, value: float | None, /) -> None: ...


class DeadlineReader:
    """The client socket as gunicorn's parser reads it: ``recv`` bounded by the current phase's deadline.

    ``expect_head()`` before each request, ``expect_body()`` once its head is parsed. ``received`` counts
    the bytes of the current phase (a head timeout with none is an idle connection, not a slow
    request), and ``head`` keeps the first bytes read in the head phase, for error answers."""

    def __init__(self, sock: _Socket, timeouts: ReadTimeouts):
        self._sock = sock
        self._timeouts = timeouts
        self._deadline = math.inf
        self._idle = timeouts.header_seconds
        self.phase: Phase = "head"
        self.received = 0
        self.head = bytearray()

    def expect_head(self) -> None:
        self._start("head", self._timeouts.header_seconds, self._timeouts.header_seconds)
        self.head.clear()

    def expect_body(self) -> None:
        self._start("body", self._timeouts.body_seconds, self._timeouts.body_idle_seconds)

    def _start(self, phase: Phase, total: float, idle: float) -> None:
        self.phase = phase
        self._deadline = time.monotonic() + total
        self._idle = idle
        self.received = 0

    def recv(self, size: int) -> bytes:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise RequestTimedOut(self.phase)
        self._sock.settimeout(min(self._idle, remaining))
        try:
            data = self._sock.recv(size)
        except TimeoutError:  # socket.timeout, also for TLS reads
            raise RequestTimedOut(self.phase) from None
        self.received += len(data)
        if self.phase == "head" and len(self.head) < HEAD_RECORD_BYTES:
            self.head += data[: HEAD_RECORD_BYTES - len(self.head)]
        return data
