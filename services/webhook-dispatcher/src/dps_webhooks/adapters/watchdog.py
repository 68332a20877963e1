"""Hard deadlines for blocking socket work, one watchdog thread per process.

A socket timeout bounds each read, not the whole response: a receiver dripping a byte a second
would hold an attempt forever. So each attempt arms a ``Cutoff`` with its deadline; at the deadline
the watchdog shuts the attempt's socket down, which makes the blocked read return at once. One
thread with a heap of deadlines serves every attempt in the process (not a timer thread each).

The thread wakes only for a deadline of an attempt still running, or for a new deadline earlier
than the one it sleeps toward: the cutoffs of attempts that ended (nearly all of them) are dropped
from the heap at its next wake, never waited for one by one. Waking for each of them cost a
wake-up per attempt, a timeout after it: 100 a second at a steady 100 events/s, and a burst's
2,000 ten seconds after the burst, when the worker is otherwise idle.
"""

from __future__ import annotations

import heapq
import itertools
import math
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

    @property
    def done(self) -> bool:
        """Released: nothing left to cut (read without the lock: a bool, set once)."""
        return self._done

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
        self._sleeping_until = math.inf  # the deadline the thread waits for (inf: none, or not started)

    def arm(self, seconds: float) -> Cutoff:
        cutoff = Cutoff(time.monotonic() + seconds)
        with self._wake:
            heapq.heappush(self._heap, (cutoff.deadline, next(self._order), cutoff))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="webhook-watchdog", daemon=True)
                self._thread.start()
            if cutoff.deadline < self._sleeping_until:  # else the thread wakes before it is due anyway
                self._sleeping_until = cutoff.deadline
                self._wake.notify()
        return cutoff

    def _run(self) -> None:
        while True:
            with self._wake:
                due = self._due()
                while not due:
                    self._sleeping_until = self._heap[0][0] if self._heap else math.inf
                    self._wake.wait(None if not self._heap else max(0.0, self._sleeping_until - time.monotonic()))
                    due = self._due()
            for cutoff in due:
                cutoff.expire()  # released since: this does nothing

    def _due(self) -> list[Cutoff]:
        """Under the lock: pop the cutoffs of ended attempts at the top, and those due; the due ones."""
        heap, due, now = self._heap, [], time.monotonic()
        while heap and (heap[0][2].done or heap[0][0] <= now):
            cutoff = heapq.heappop(heap)[2]
            if not cutoff.done:
                due.append(cutoff)
        return due


_process_watchdog = Watchdog()


def arm(seconds: float) -> Cutoff:
    """A cutoff ``seconds`` from now, watched by the process's watchdog thread."""
    return _process_watchdog.arm(seconds)
