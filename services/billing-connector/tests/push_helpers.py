"""Running pushes end to end in the tests: a connected organization on the stand-in, a quote served
by the fake api, the push requested over HTTP, and a worker (in a thread or a process)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from dps_billing.composition import build_push_worker
from dps_billing.domain.quote_snapshot import QuoteSnapshot
from dps_billing.settings import Settings

WORKER_CLI = str(Path(sys.executable).with_name("dealpricing-billing"))


def request_push(served: str, key: str, snapshot: QuoteSnapshot) -> dict[str, Any]:
    resp = requests.post(f"{served}/external/v1/pricing-quotes/{snapshot.id}/billing-pushes",
                         headers={"x-api-key": key}, timeout=10)
    assert resp.status_code == 202, resp.text
    return resp.json()


def read_push(served: str, key: str, quote_id: object, push_id: str) -> dict[str, Any]:
    resp = requests.get(f"{served}/external/v1/pricing-quotes/{quote_id}/billing-pushes/{push_id}",
                        headers={"x-api-key": key}, timeout=10)
    assert resp.status_code == 200, resp.text
    return resp.json()


def wait_for(served: str, key: str, quote_id: object, push_id: str, done: Any = None,
             timeout: float = 60) -> dict[str, Any]:
    """The push once ``done(push)`` holds (default: it finished)."""
    deadline = time.monotonic() + timeout
    while True:
        push = read_push(served, key, quote_id, push_id)
        if (done(push) if done else push["status"] in ("succeeded", "failed")):
            return push
        assert time.monotonic() < deadline, push
        time.sleep(0.05)


@contextmanager
def worker_thread(settings: Settings) -> Iterator[None]:
    worker = build_push_worker(settings)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        worker.stop()
        thread.join(timeout=30)


def worker_process(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([WORKER_CLI, "worker"], env={**os.environ, **env, "LOG_LEVEL": "INFO"},
                                stdout=out, stderr=subprocess.STDOUT)
