"""The services as a deployment runs them, for the scale scenarios: their own databases migrated by
their own command lines, the api and the dispatcher under gunicorn over TLS, the api's outbox relay,
dispatcher workers and a real HTTPS receiver. Only stable entry points are used: the console scripts
(``dealpricing-admin``, ``dealpricing-webhooks``, ``dealpricing-outbox-relay``) and the gunicorn
apps (``<package>.wsgi:create()``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import requests

from dps_common.crypto import new_key
from dps_testing.processes import stop
from dps_testing.rate_limits import UNTHROTTLED

BIN = Path(sys.executable).parent
PEPPER = "scale-pepper-0123456789abcdef0123456789abcdef012"
CURSOR_SECRET = "scale-cursor-secret-0123456789abcdef0123456789"
INTERNAL_API_TOKEN = "scale-internal-token-0123456789abcdef012345"
EVENTS_EXCHANGE = "dps.events"
EVENTS_QUEUE = "webhook-dispatcher.events"
T = TypeVar("T")


def api_env(database_url: str, amqp_url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_KEY_PEPPER": PEPPER,
        "CURSOR_SECRET": CURSOR_SECRET,
        "INTERNAL_API_TOKEN": INTERNAL_API_TOKEN,
        "AMQP_URL": amqp_url,
        "EVENTS_EXCHANGE": EVENTS_EXCHANGE,
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
        "DB_POOL_SIZE": "2",
        **UNTHROTTLED,
        **extra,
    }


def dispatcher_env(database_url: str, amqp_url: str, api_origin: str, ca_file: str, **extra: str) -> dict[str, str]:
    return {
        **api_env(database_url, amqp_url),
        "WEBHOOK_SECRET_KEY": new_key(),
        "API_URL": api_origin,
        "API_CA_FILE": ca_file,
        "EVENTS_QUEUE": EVENTS_QUEUE,
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",  # the receiver is on loopback
        "WEBHOOK_RECEIVER_CA_FILE": ca_file,
        "WEBHOOK_POLL_INTERVAL_SECONDS": "0.2",
        **extra,
    }


def migrate(command: str, env: dict[str, str]) -> None:
    """``<command> migrate``, as a release's migration Job runs it."""
    done = subprocess.run([str(BIN / command), "migrate"], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{command} migrate -> {done.returncode}: {done.stderr[-2000:]}"


@contextmanager
def process(name: str, command: list[str], env: dict[str, str], logs: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A long-running console script, its output in ``logs/<name>.log``; stopped at the end."""
    with open(logs / f"{name}.log", "wb") as log:
        child = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield child
    finally:
        stop(child)


def https(ca_file: str) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.verify = ca_file
    return session


class ThreadSessions:
    """One ``requests.Session`` per thread (a Session is not thread-safe)."""

    def __init__(self, ca_file: str):
        self._ca_file = ca_file
        self._local = threading.local()

    def get(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = https(self._ca_file)
        return session


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = 60, every: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(every)


@dataclass
class Figures:
    """A scenario's measured numbers, printed at the end of the run (never asserted on: timings
    belong to the report, deploy/README.md's "Scale")."""

    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def add(self, scenario: str, **numbers: Any) -> None:
        self.rows.append((scenario, numbers))

    def lines(self) -> list[str]:
        return [f"{scenario}: {json.dumps(numbers)}" for scenario, numbers in self.rows]
