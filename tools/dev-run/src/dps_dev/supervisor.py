"""The processes of ``make run``, supervised as one: started in order, ready when their ``/readyz``
answers, stopped together (SIGTERM, newest first; SIGKILL after a bound) on any stop.

Once all are up, a process that exits is started again, as the cluster restarts a crashed container:
after a backoff (1 s, doubling up to 30 s; back to 1 s once it has run a minute), each said on
stderr. Only a crash loop (``CRASH_LOOP`` exits of one process within ``CRASH_WINDOW_SECONDS``) stops
everything, with the reason.

Each child also gets a parent-death signal (Linux): should the runner itself be killed outright
(SIGKILL, a crash), the kernel sends the child SIGTERM, so nothing of ``make run`` outlives it."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

READY_TIMEOUT_SECONDS = 90  # first start on a busy 2-core machine: imports, migrations done before
STOP_TIMEOUT_SECONDS = 30  # gunicorn's graceful timeout is 20 s
CRASH_LOOP = 5  # exits of one process within the window that stop everything
CRASH_WINDOW_SECONDS = 60.0
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
POLL_SECONDS = 0.3
_PR_SET_PDEATHSIG = 1


class StartFailed(Exception):
    pass


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    ready_url: str | None
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    started_at: float = field(default_factory=time.monotonic)
    crashes: list[float] = field(default_factory=list)  # when it exited, within the crash window
    restart_at: float | None = None  # when it is started again (None: running)
    backoff: float = FIRST_BACKOFF_SECONDS


class CrashLoop(Exception):
    """One process keeps exiting: ``make run`` stops, with this reason."""

    def __init__(self, child: Child):
        super().__init__(f"{child.name} exited {len(child.crashes)} times within {CRASH_WINDOW_SECONDS:.0f} s"
                         f" (last with {child.process.returncode}): a crash loop")
        self.child = child


def die_with_parent(signum: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to send ``signum`` to the child when the runner dies; None
    where there is no ``prctl`` (not Linux): there the runner's own stop is the only one."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    parent = os.getpid()

    def arrange() -> None:  # runs in the child, between fork and exec
        libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # the runner died before prctl took effect
            os._exit(1)

    return arrange


class Supervisor:
    def __init__(self, first_backoff: float = FIRST_BACKOFF_SECONDS) -> None:
        self.children: list[Child] = []
        self.first_backoff = first_backoff

    def start(self, name: str, command: Sequence[str], env: dict[str, str], ready_url: str | None = None) -> Child:
        child = Child(name, _spawn(command, env), ready_url, list(command), env)
        self.children.append(child)
        return child

    def wait_ready(self) -> None:
        """Until every child with a ``ready_url`` answers 200 there; ``StartFailed`` if one exits first
        or time runs out."""
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        waiting = [child for child in self.children if child.ready_url]
        while waiting:
            for child in self.children:
                if child.process.poll() is not None:
                    raise StartFailed(f"{child.name} exited with {child.process.returncode} while starting")
            waiting = [child for child in waiting if not _answers(child.ready_url or "")]
            if waiting and time.monotonic() > deadline:
                names = ", ".join(child.name for child in waiting)
                raise StartFailed(f"not ready after {READY_TIMEOUT_SECONDS} s: {names}")
            if waiting:
                time.sleep(0.3)

    def watch(self, stop: threading.Event | None = None) -> None:
        """Keep every child running until a stop signal interrupts this (``StopRequested``) or ``stop``
        is set: one that exits is started again after its backoff; ``CrashLoop`` when one exits too often."""
        while stop is None or not stop.is_set():
            now = time.monotonic()
            for child in self.children:
                if child.restart_at is None and child.process.poll() is not None:
                    self._schedule_restart(child, now)
                elif child.restart_at is not None and now >= child.restart_at:
                    child.process = _spawn(child.command, child.env)
                    child.started_at, child.restart_at = now, None
                    _say(f"{child.name} started again (pid {child.process.pid})")
            time.sleep(POLL_SECONDS)

    def _schedule_restart(self, child: Child, now: float) -> None:
        if now - child.started_at >= CRASH_WINDOW_SECONDS or not child.crashes:
            child.backoff = self.first_backoff  # its first exit, or it ran a while: a fresh start, not a loop
        child.crashes = [at for at in child.crashes if now - at < CRASH_WINDOW_SECONDS] + [now]
        if len(child.crashes) >= CRASH_LOOP:
            raise CrashLoop(child)
        child.restart_at = now + child.backoff
        _say(f"{child.name} exited with {child.process.returncode}; starting it again in {child.backoff:g} s"
             f" ({len(child.crashes)} of {CRASH_LOOP} exits allowed within {CRASH_WINDOW_SECONDS:.0f} s)")
        child.backoff = min(child.backoff * 2, MAX_BACKOFF_SECONDS)

    def stop_all(self) -> None:
        """SIGTERM to every child still running, newest first, then wait; SIGKILL the stragglers."""
        for child in reversed(self.children):
            child.restart_at = None
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for child in reversed(self.children):
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"{child.name} did not stop in {STOP_TIMEOUT_SECONDS} s: killed", file=sys.stderr, flush=True)
                child.process.kill()
                child.process.wait()


def _spawn(command: Sequence[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(list(command), env=env, preexec_fn=die_with_parent(signal.SIGTERM))


def _say(line: str) -> None:
    print(f"make run: {line}", file=sys.stderr, flush=True)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False
