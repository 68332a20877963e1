"""Hard deadlines for blocking socket work, one watchdog thread per process.

A socket timeout bounds each read, not the whole response: a receiver dripping a byte a second
would hold an attempt forever. So each attempt arms a ``Cutoff`` with its deadline; at the deadline
the watchdog shuts the attempt's socket down, which makes the blocked read return at once. One
thread with a heap of deadlines serves every attempt in the process (not a timer thread each).
"""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import time


class Cutoff:
    """An attempt's deadline; the socket it guards may be attached (and replaced) as it is made."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._expired = False
        self._done = False

    @property
    def expired(self) -> bool:
        return self._expired

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self._expired:
                _shut(sock)

    def release(self) -> None:
        """The attempt is over: the socket is no longer ours to cut (it may be kept alive)."""
        with self._lock:
            self._done = True
            self._socket = None

    def expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._expired = True
            if self._socket is not None:
                _shut(self._socket)


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown, even on an SSLSocket: it acts on the descriptor and leaves the TLS
    # object alone while another thread may be inside it.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # not connected yet, or already closed: nothing left to cut


class Watchdog:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Cutoff]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float) -> Cutoff:
        cutoff = Cutoff(time.monotonic() + seconds)
        with self._wake:
            heapq.heappush(self._heap, (cutoff.deadline, next(self._order), cutoff))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="webhook-watchdog", daemon=True)
                self._thread.start()
            if self._heap[0][2] is cutoff:
                self._wake.notify()
        return cutoff

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._wake.wait(timeout)
                _deadline, _order, cutoff = heapq.heappop(self._heap)
            cutoff.expire()  # a released cutoff ignores this


_process_watchdog = Watchdog()


def arm(seconds: float) -> Cutoff:
    """A cutoff ``seconds`` from now, watched by the process's watchdog thread."""
    return _process_watchdog.arm(seconds)
