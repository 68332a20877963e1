"""Database plumbing: the declarative base with a naming convention, engines and transactions."""

from __future__ import annotations

import select
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import pq
from psycopg.types.array import ListBinaryDumper
from sqlalchemy import ClauseElement, MetaData, create_engine, event, text
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import PoolProxiedConnection

from dps_common.db_retry import transaction_committed, transaction_failed
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


def make_engine(
    database_url: str, *, pool_size: int = 5, max_overflow: int | None = None, application_name: str = "dps"
) -> Engine:
    """The process's engine: at most ``pool_size`` connections kept open between uses, and up to
    ``max_overflow`` more (default: as many) opened when that many are in use at once, closed when
    returned. ``application_name`` names its connections (pg_stat_activity) and its pool's metrics.

    Lost connections (``dps_common.db_retry``): a pooled connection the server closed while it sat in
    the pool is found at checkout without a round trip (``_closed_by_server``) and replaced; one that
    fails in use is a disconnect to SQLAlchemy, which then discards every connection the pool held
    before it. Recycling bounds the age of idle connections."""
    url = make_url(sqlalchemy_url(database_url)).update_query_dict({"application_name": application_name})
    engine = create_engine(
        url,
        poolclass=MeteredQueuePool,  # dps_db_pool_connections{pool=application_name}
        pool_size=pool_size,
        max_overflow=pool_size if max_overflow is None else max_overflow,
        pool_recycle=1800,
        json_serializer=lambda value: dumps(value).decode(),
        json_deserializer=loads,
    )
    event.listen(engine, "connect", _send_lists_in_binary)
    event.listen(engine, "checkout", _closed_by_server)
    event.listen(engine, "after_cursor_execute", _count_statement)
    if isinstance(engine.pool, MeteredQueuePool):
        engine.pool.meter(application_name)
    return engine


def _closed_by_server(dbapi_connection: psycopg.Connection[Any], _record: object, _proxy: object) -> None:
    """At checkout: a connection the server ended while it was idle in the pool (a restart, an
    operator's pg_terminate_backend, an idle timeout) has its last message or end of stream waiting
    on the socket; reading what is there costs no round trip. SQLAlchemy replaces the connection
    when this raises (the documented "pessimistic" handling, without pre-ping's round trip)."""
    if not is_alive(dbapi_connection):
        raise sa_exc.DisconnectionError("the server closed the connection while it was idle in the pool")


def is_alive(connection: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection is still open at both ends, as far as can be told without a round
    trip. A pool's connection listens to no channel, so nothing arrives while it is idle but the
    server's goodbye (its FATAL message and the end of the stream): anything readable means it is
    gone (or, rarely, a parameter change: a reconnection too many, nothing worse)."""
    if connection.closed or connection.broken:
        return False
    readable, _, _ = select.select([connection.fileno()], [], [], 0)
    return not readable


@dataclass
class _Statements:
    completed: int = 0


# the statements completed by the transaction running in this context (greenlet or thread)
_statements: ContextVar[_Statements | None] = ContextVar("dps_db_statements", default=None)


def _count_statement(*_args: object) -> None:
    statements = _statements.get()
    if statements is not None:
        statements.completed += 1


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

    Each transaction's end is reported to ``dps_common.db_retry``, which retries a use case whose
    connection was lost before it did anything.
    """

    def __init__(self, factory: sessionmaker[Session], read_engine: Engine | None = None):
        self._factory = factory
        self._read_engine = read_engine
        self._read_factory = sessionmaker(read_engine, expire_on_commit=False) if read_engine else factory

    @classmethod
    def for_engine(cls, engine: Engine) -> "Transactions":
        return cls(sessionmaker(engine, expire_on_commit=False), engine.execution_options(isolation_level="AUTOCOMMIT"))

    @contextmanager
    def __call__(self) -> Iterator[Session]:
        statements = _Statements()
        token = _statements.set(statements)
        try:
            with self._factory.begin() as session:
                yield session
        except BaseException as error:
            transaction_failed(error, started=statements.completed > 0)
            raise
        finally:
            _statements.reset(token)
        if statements.completed:
            transaction_committed()

    @contextmanager
    def read(self) -> Iterator[Session]:
        try:
            with self._read_factory.begin() as session:
                yield session
        except BaseException as error:
            transaction_failed(error, started=False)  # it wrote nothing: no commit to fear
            raise

    @contextmanager
    def read_cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        """A driver cursor for the hottest read paths: plain SQL in autocommit on a connection of the
        engine's pool, so a read costs its query and little else (no session, no statement building,
        no BEGIN). Pooled like every other connection, so the process holds no more than the pool."""
        if self._read_engine is None:  # bound to a connection (tests): read inside its transaction
            with self.read() as session, session_cursor(session) as cursor:
                yield cursor
            return
        pooled, connection = self._pooled(self._read_engine)
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                yield cursor
            connection.autocommit = False  # as the pool's other users expect it
        except BaseException as error:
            transaction_failed(error, started=False)
            if connection.broken or connection.closed or connection.pgconn.transaction_status != pq.TransactionStatus.IDLE:
                pooled.invalidate(error)  # never back to the pool
            else:
                connection.autocommit = False
            raise
        finally:
            pooled.close()  # back to the pool (or gone, when invalidated)

    @contextmanager
    def write_cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        """A driver cursor in one transaction, committed on success and rolled back on error, for the
        hottest write paths (the outbox relay, the events' intake): a batch then costs its statements
        (``driver_sql``) and the COMMIT, without a session, its statement cache look-ups and bind
        processing. On a connection of the engine's pool; ends reported to ``dps_common.db_retry``
        as ``__call__``'s are. Bound to a connection (tests): inside a session's transaction."""
        if self._read_engine is None:
            with self() as session, session_cursor(session) as cursor:
                yield cursor
            return
        pooled, connection = self._pooled(self._read_engine)
        cursor = connection.cursor()
        try:
            yield cursor
            connection.commit()
        except BaseException as error:
            transaction_failed(error, started=cursor.pgresult is not None)  # a statement of it completed
            if connection.broken or connection.closed:
                pooled.invalidate(error)  # never back to the pool
            else:
                try:
                    connection.rollback()
                except psycopg.Error:
                    pooled.invalidate(error)
            raise
        else:
            transaction_committed()
        finally:
            cursor.close()
            pooled.close()  # back to the pool (or gone, when invalidated)

    @staticmethod
    def _pooled(engine: Engine) -> tuple[PoolProxiedConnection, psycopg.Connection[Any]]:
        """A connection of ``engine``'s pool and its psycopg connection; failing to get one is reported
        to ``dps_common.db_retry`` as a transaction that never started."""
        try:
            pooled = engine.raw_connection()
        except BaseException as error:
            transaction_failed(error, started=False)
            raise
        connection = pooled.driver_connection
        assert isinstance(connection, psycopg.Connection)
        return pooled, connection

    def dispose(self) -> None:
        """Close every connection of the engine's pool."""
        if self._read_engine is not None:
            self._read_engine.dispose()  # the same pool as the engine it was made from


@contextmanager
def session_cursor(session: Session) -> Iterator[psycopg.Cursor[Any]]:
    """A driver cursor on the connection of ``session``'s transaction (for ``driver_sql`` statements)."""
    driver_connection = session.connection().connection.driver_connection
    assert isinstance(driver_connection, psycopg.Connection)
    with driver_connection.cursor() as cursor:
        yield cursor


_DIALECT = PGDialect_psycopg()  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class DriverStatement:
    """A statement compiled once to the SQL that SQLAlchemy sends for it on psycopg (named
    ``%(name)s`` parameters, each with its cast), to run on a driver cursor with the values a
    session would pass; ``constants``: the values the statement binds itself (its literals)."""

    sql: str
    constants: dict[str, Any]

    def params(self, values: dict[str, Any] | None = None) -> dict[str, Any]:
        return {**self.constants, **values} if values else self.constants


def driver_sql(statement: ClauseElement) -> DriverStatement:
    compiled = statement.compile(dialect=_DIALECT)
    return DriverStatement(str(compiled), {key: value for key, value in compiled.params.items() if value is not None})


def ping(tx: Transactions) -> None:
    """The database answers (a service's readiness): one round trip on a read connection."""
    with tx.read() as session:
        session.execute(text("SELECT 1"))
