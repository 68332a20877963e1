"""The processes of ``make run``, supervised as one: started in order, ready when their ``/readyz``
answers, stopped together (SIGTERM, newest first; SIGKILL after a bound) on any stop or when one of
them exits.

Each child also gets a parent-death signal (Linux): should the runner itself be killed outright
(SIGKILL, a crash), the kernel sends the child SIGTERM, so nothing of ``make run`` outlives it."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass

READY_TIMEOUT_SECONDS = 90  # first start on a busy 2-core machine: imports, migrations done before
STOP_TIMEOUT_SECONDS = 30  # gunicorn's graceful timeout is 20 s
_PR_SET_PDEATHSIG = 1


class StartFailed(Exception):
    pass


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    ready_url: str | None


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
    def __init__(self) -> None:
        self.children: list[Child] = []

    def start(self, name: str, command: Sequence[str], env: dict[str, str], ready_url: str | None = None) -> Child:
        process = subprocess.Popen(list(command), env=env, preexec_fn=die_with_parent(signal.SIGTERM))
        child = Child(name, process, ready_url)
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

    def wait_any(self) -> Child:
        """Block until one child exits (a stop signal interrupts this with ``StopRequested``)."""
        while True:
            for child in self.children:
                if child.process.poll() is not None:
                    return child
            time.sleep(0.3)

    def stop_all(self) -> None:
        """SIGTERM to every child still running, newest first, then wait; SIGKILL the stragglers."""
        for child in reversed(self.children):
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


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False
