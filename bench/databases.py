"""The benchmarks' databases: a fresh one per run on the server under test, dropped afterwards."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg

# bench_v7(at): a UUIDv7 whose time is ``at``, for history loaded in SQL (the dispatcher's ids are
# UUIDv7 and its history is partitioned by their day)
UUID7_AT_FUNCTION = """
CREATE FUNCTION bench_v7(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7'
          || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid $$
"""


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
