"""Stopping and inspecting the local RabbitMQ in tests (``rabbitmqctl`` on this machine).

``broker_stopped()`` stops the broker application for the block and always starts it again, and
``ensure_broker_running()`` repairs a broker left stopped by an earlier, interrupted run."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import unquote, urlsplit

RABBITMQCTL_TIMEOUT_SECONDS = 120


def rabbitmqctl(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    rabbitmqctl = shutil.which("rabbitmqctl")
    if rabbitmqctl is None:
        raise RuntimeError("rabbitmqctl is needed to stop and start the test broker")
    return subprocess.run(
        [rabbitmqctl, *args], check=check, capture_output=True, text=True, timeout=RABBITMQCTL_TIMEOUT_SECONDS
    )


def ensure_broker_running() -> None:
    """Start the node when it is down and its application when stopped; wait until it serves."""
    if rabbitmqctl("-q", "status", check=False).returncode == 0:  # fails while the app is stopped
        return
    if rabbitmqctl("-q", "ping", check=False).returncode != 0:  # the node itself is down
        subprocess.run(["rabbitmq-server", "-detached"], check=False, capture_output=True, timeout=60)
        for _ in range(90):
            if rabbitmqctl("-q", "ping", check=False).returncode == 0:
                break
            time.sleep(1)
    rabbitmqctl("-q", "start_app")  # a no-op when it runs
    rabbitmqctl("-q", "await_startup")


@contextmanager
def broker_stopped() -> Iterator[None]:
    """The broker application stopped (connections dropped, nothing accepted) for the block."""
    ensure_broker_running()
    rabbitmqctl("-q", "stop_app")
    try:
        yield
    finally:
        ensure_broker_running()


def restart_broker() -> None:
    with broker_stopped():
        pass


def queue_counts(amqp_url: str, queue: str) -> tuple[int, int]:
    """(ready, unacknowledged) messages of ``queue`` on the URL's virtual host."""
    vhost = unquote(urlsplit(amqp_url).path[1:]) or "/"
    columns = ("name", "messages_ready", "messages_unacknowledged")
    listing = rabbitmqctl("-q", "list_queues", "-p", vhost, "--no-table-headers", *columns).stdout
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == queue:
            return int(fields[1]), int(fields[2])
    raise LookupError(f"no queue {queue!r} on virtual host {vhost!r}")
