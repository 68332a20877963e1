"""Database plumbing: the declarative base with a naming convention, engines and transactions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.types.array import ListBinaryDumper
from sqlalchemy import MetaData, create_engine, event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from dps_common.json import dumps, loads
from dps_common.runtime_metrics import MeteredQueuePool

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_metadata() -> MetaData:
    return MetaData(naming_convention=NAMING_CONVENTION)


def sqlalchemy_url(database_url: str) -> str:
    """Accept plain ``postgresql://`` URLs and select the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url[len(prefix) :]
    raise ValueError("DATABASE_URL must be a postgresql:// URL")


def make_engine(database_url: str, *, pool_size: int = 5, application_name: str = "dps") -> Engine:
    # No pre-ping: it costs a round trip on every checkout. A connection found dead fails its one
    # request, and SQLAlchemy then invalidates the whole pool, so a database restart costs each
    # worker at most one failed request; recycling bounds the age of idle connections.
    url = make_url(sqlalchemy_url(database_url)).update_query_dict({"application_name": application_name})
    engine = create_engine(
        url,
        poolclass=MeteredQueuePool,  # dps_db_pool_connections{pool=application_name}
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_recycle=1800,
        json_serializer=lambda value: dumps(value).decode(),
        json_deserializer=loads,
    )
    event.listen(engine, "connect", _send_lists_in_binary)
    if isinstance(engine.pool, MeteredQueuePool):
        engine.pool.meter(application_name)
    return engine


def _send_lists_in_binary(dbapi_connection: psycopg.Connection[Any], _record: object) -> None:
    """Array parameters go in PostgreSQL's binary format: psycopg's text format escapes every element
    with a regular expression, which dominates the cost of sending a batch of JSON bodies (the figure
    is in bench/README.md). SQLAlchemy renders a cast on every parameter, so the element types hold."""
    dbapi_connection.adapters.register_dumper(list, ListBinaryDumper)


class Transactions:
    """One transaction per use case: ``with tx() as session`` commits on success, rolls back on error.

    ``read()`` is for use cases that only read. On an engine it runs in autocommit: each statement
    sees the latest committed data, exactly as under READ COMMITTED, without the BEGIN and COMMIT
    round trips that would otherwise double a simple read's cost.
    """

    def __init__(self, factory: sessionmaker[Session], read_engine: Engine | None = None):
        self._factory = factory
        self._read_engine = read_engine
        self._read_factory = sessionmaker(read_engine, expire_on_commit=False) if read_engine else factory
        # read connections: idle ones kept for reuse, at most ``read_connections`` in use at once
        self._idle_reads: list[psycopg.Connection[Any]] = []
        self._read_connections: list[psycopg.Connection[Any]] = []
        self._read_slots = threading.BoundedSemaphore(_pool_size(read_engine))
        self._lock = threading.Lock()

    @classmethod
    def for_engine(cls, engine: Engine) -> "Transactions":
        return cls(sessionmaker(engine, expire_on_commit=False), engine.execution_options(isolation_level="AUTOCOMMIT"))

    @contextmanager
    def __call__(self) -> Iterator[Session]:
        with self._factory.begin() as session:
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self._read_factory.begin() as session:
            yield session

    @contextmanager
    def read_cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        """A driver cursor for the hottest read paths: plain SQL on an autocommit connection kept
        open between reads, so a read costs its query and nothing else (no pool checkout and reset,
        no session, no statement building). At most the engine's pool size are in use at once: under
        gevent every client connection is a greenlet, and one connection each would be unbounded. A
        broken connection fails its one request and is replaced on the next."""
        if self._read_engine is None:  # bound to a connection (tests): read inside its transaction
            with self.read() as session:
                driver_connection = session.connection().connection.driver_connection
                assert isinstance(driver_connection, psycopg.Connection)
                with driver_connection.cursor() as cursor:
                    yield cursor
            return
        with self._read_slots:
            connection = self._borrow_read_connection(self._read_engine)
            try:
                with connection.cursor() as cursor:
                    yield cursor
            finally:
                with self._lock:
                    self._idle_reads.append(connection)

    def _borrow_read_connection(self, engine: Engine) -> psycopg.Connection[Any]:
        with self._lock:
            connection = self._idle_reads.pop() if self._idle_reads else None
        if connection is None or connection.closed or connection.broken:
            if connection is not None:
                connection.close()
            url = engine.url.set(drivername="postgresql")  # the same server, name and options
            connection = psycopg.connect(url.render_as_string(hide_password=False), autocommit=True)
            with self._lock:
                self._read_connections = [c for c in self._read_connections if not c.closed]
                self._read_connections.append(connection)
        return connection

    def dispose(self) -> None:
        """Close every connection: the read connections and the engine's pool."""
        with self._lock:
            connections, self._read_connections, self._idle_reads = self._read_connections, [], []
        for connection in connections:
            connection.close()
        if self._read_engine is not None:
            self._read_engine.dispose()  # the same pool as the engine it was made from


def _pool_size(engine: Engine | None) -> int:
    size = getattr(engine.pool, "size", None) if engine is not None else None
    return int(size()) if callable(size) else 5


def ping(tx: Transactions) -> None:
    """The database answers (a service's readiness): one round trip on a read connection."""
    with tx.read() as session:
        session.execute(text("SELECT 1"))
