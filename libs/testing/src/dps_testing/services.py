"""Real PostgreSQL and RabbitMQ for tests: found by DATABASE_URL / AMQP_URL (defaulting to the local
servers), else started with testcontainers where Docker runs. With ``CI=true`` a missing server is
a failure, never a skip. Each test run gets its own database, dropped afterwards; under pytest-xdist
each worker makes its own, the worker id in the name."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

import psycopg
from kombu.connection import Connection

from dps_common.messaging import DEFAULT_AMQP_URL
from dps_testing.availability import unavailable
from dps_testing.broker import rabbitmqctl

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def _unavailable(what: str, why: Exception) -> NoReturn:
    unavailable(f"{what} is not reachable ({why}); set DATABASE_URL / AMQP_URL or start it")


def unique_name(prefix: str) -> str:
    """``prefix``, the xdist worker (``gw0``...) when there is one, and a random part: never the
    name of another run's or another worker's database or virtual host."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return "_".join(filter(None, (prefix, worker, secrets.token_hex(4))))


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


@contextmanager
def _server_url() -> Iterator[str]:
    url = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    try:
        psycopg.connect(url, connect_timeout=3).close()
        yield url
        return
    except psycopg.OperationalError as exc:
        first_error = exc
    try:
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver=None) as container:
            yield container.get_connection_url()
    except Exception as exc:  # no Docker engine either: report the first cause
        _unavailable("PostgreSQL", first_error if "docker" in str(exc).lower() else exc)


@contextmanager
def fresh_database(prefix: str) -> Iterator[str]:
    """A new, empty database on the test server; dropped when the block ends."""
    with _server_url() as server_url:
        name = unique_name(prefix)
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield _with_database(server_url, name)
        finally:
            with psycopg.connect(server_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def amqp_server_url() -> str:
    """The broker under test; fails (CI) or skips when it does not answer."""
    url = os.environ.get("AMQP_URL", DEFAULT_AMQP_URL)
    try:
        with Connection(url, connect_timeout=3) as connection:
            connection.ensure_connection(max_retries=1)
    except Exception as exc:  # kombu raises the transport's own errors
        _unavailable("RabbitMQ", exc)
    return url


@contextmanager
def fresh_vhost(prefix: str) -> Iterator[str]:
    """The test broker's URL on a new virtual host, deleted when the block ends.

    Virtual hosts are made with ``rabbitmqctl`` on the broker's machine; where there is none (a
    remote broker), the URL's own vhost is used and tests keep apart by their unique names."""
    url = amqp_server_url()
    if shutil.which("rabbitmqctl") is None:
        yield url
        return
    name = unique_name(prefix)
    user = urlsplit(url).username or "guest"
    rabbitmqctl("-q", "add_vhost", name)
    try:
        rabbitmqctl("-q", "set_permissions", "-p", name, user, ".*", ".*", ".*")
        yield urlunsplit(urlsplit(url)._replace(path="/" + name))
    finally:
        rabbitmqctl("-q", "delete_vhost", name, check=False)
