"""The benchmarks' databases: a fresh one per run on the server under test, dropped afterwards."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg


@contextmanager
def fresh_database(server_url: str, prefix: str = "dps_bench") -> Iterator[str]:
    """A new database on ``server_url``'s server, dropped when the block ends."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(server_url)._replace(path="/" + name))
    finally:
        with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_version(server_url: str) -> str:
    with psycopg.connect(server_url, connect_timeout=5) as conn:
        row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "unknown"
