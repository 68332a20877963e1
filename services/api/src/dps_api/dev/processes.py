"""The processes of ``make run``, supervised as one: started in order, stopped together on Ctrl-C,
SIGTERM or the exit of any one of them."""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

READY_TIMEOUT_SECONDS = 30
STOP_TIMEOUT_SECONDS = 30


@dataclass
class Child:
    name: str
    process: subprocess.Popen


class Supervisor:
    def __init__(self) -> None:
        self.children: list[Child] = []

    def start(self, name: str, command: Sequence[str], env: dict[str, str]) -> Child:
        child = Child(name, subprocess.Popen(list(command), env=env))
        self.children.append(child)
        return child

    def wait_ready(self, child: Child, base: str) -> bool:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline and child.process.poll() is None:
            try:
                with urllib.request.urlopen(base + "/readyz", timeout=2) as response:
                    if response.status == 200:
                        return True
            except OSError:
                pass
            time.sleep(0.3)
        return False

    def wait_any(self) -> Child:
        """Block until one child exits (or Ctrl-C / SIGTERM arrives as KeyboardInterrupt)."""
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            while True:
                for child in self.children:
                    if child.process.poll() is not None:
                        return child
                time.sleep(0.5)
        finally:
            signal.signal(signal.SIGTERM, previous)

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
                child.process.kill()
                child.process.wait()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
