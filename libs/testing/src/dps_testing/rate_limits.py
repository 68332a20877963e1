"""Rate limits in tests. Suites that are not about them run with budgets no test reaches
(``UNTHROTTLED``), so the middleware still answers every request with its headers.

The machine's Redis for tests (REDIS_URL, default 127.0.0.1:6379): each test counts under a key
prefix of its own, deleted afterwards, so runs and xdist workers never meet. Never flushes, stops
or reconfigures the server. With ``CI=true`` an unreachable Redis is a failure, never a skip."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from dps_testing.availability import unavailable
from dps_testing.services import unique_name

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
UNTHROTTLED = {"RATE_LIMIT_ORGANIZATION": "1000000/second", "RATE_LIMIT_ANONYMOUS": "1000000/second",
               "RATE_LIMIT_DOCUMENTATION": "1000000/second"}


def redis_url() -> str:
    url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    try:
        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        unavailable(f"Redis is not reachable at {url} ({exc}); set REDIS_URL or start it")
    return url


@contextmanager
def key_prefix(url: str, name: str = "dps-test-rl") -> Iterator[str]:
    """A fresh key prefix; its keys are deleted at the end."""
    prefix = unique_name(name)
    try:
        yield prefix
    finally:
        client = redis.Redis.from_url(url)
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)


def closed_port_url() -> str:
    """A redis:// URL on a loopback port nothing listens on (bound, then released): an outage."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"
