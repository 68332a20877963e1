"""A use case whose connection is lost: retried once when nothing was done, else DatabaseUnavailable
(dps_common.db_retry), on a real PostgreSQL whose sessions the test ends (pg_terminate_backend)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

import psycopg
import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from dps_common.db import Transactions, make_engine
from dps_common.db_retry import run_retrying
from dps_common.errors import DatabaseUnavailable
from dps_testing.services import fresh_database

T = TypeVar("T")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with fresh_database("dps_common_db_retry") as url:
        engine = make_engine(url, pool_size=1, application_name="dps-retry-setup")
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE notes (body text NOT NULL)"))
        engine.dispose()
        yield url


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    engine = make_engine(url, pool_size=2, application_name="dps-retry-test")
    yield engine
    engine.dispose()


@pytest.fixture
def tx(engine: Engine) -> Transactions:
    return Transactions.for_engine(engine)


class Counted(Generic[T]):
    """A use case that counts its runs: how many times ``run_retrying`` ran it."""

    def __init__(self, use_case: Callable[[], T]):
        self._use_case = use_case
        self.runs = 0

    def __call__(self) -> T:
        self.runs += 1
        return self._use_case()


def _kill(engine: Engine, pid: int) -> None:
    """End the session and wait until it is gone, as an operator or a restart would."""
    conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True, application_name="dps-retry-admin") as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(200):
            if not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
                return
            time.sleep(0.02)
    raise AssertionError(f"session {pid} did not end")


def _kill_next_checkout(engine: Engine) -> None:
    """The connection dies right after the pool checked it (between the check and the first
    statement): the race no check at checkout can close."""

    armed = [True]

    def kill(dbapi_connection: psycopg.Connection, _record: object, _proxy: object) -> None:
        if armed.pop() if armed else False:  # once (a listener cannot remove itself while called)
            _kill(engine, dbapi_connection.info.backend_pid)

    event.listen(engine, "checkout", kill)


def _notes(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return list(connection.execute(text("SELECT body FROM notes ORDER BY body")).scalars())


def test_a_write_whose_connection_died_before_its_first_statement_runs_once_more(engine: Engine, tx) -> None:
    @Counted
    def use_case() -> str:
        with tx() as session:
            session.execute(text("INSERT INTO notes (body) VALUES ('first statement lost')"))
        return "done"

    _kill_next_checkout(engine)
    assert run_retrying(use_case) == "done"
    assert use_case.runs == 2
    assert "first statement lost" in _notes(engine)


def test_a_read_whose_connection_died_runs_once_more(engine: Engine, tx) -> None:
    @Counted
    def read_cursor() -> int:
        with tx.read_cursor() as cursor:
            cursor.execute("SELECT 41 + 1")
            row = cursor.fetchone()
            assert row is not None
            return int(row[0])

    _kill_next_checkout(engine)
    assert run_retrying(read_cursor) == 42
    assert read_cursor.runs == 2

    def read() -> int:
        with tx.read() as session:
            return int(session.execute(text("SELECT 7")).scalar_one())

    _kill_next_checkout(engine)
    assert run_retrying(read) == 7


def test_nothing_that_may_have_committed_is_retried(engine: Engine, tx) -> None:
    @Counted
    def after_a_commit() -> None:
        with tx() as session:
            session.execute(text("INSERT INTO notes (body) VALUES ('committed once')"))
        _kill_next_checkout(engine)
        with tx() as session:
            session.execute(text("SELECT 1"))

    with pytest.raises(DatabaseUnavailable) as raised:
        run_retrying(after_a_commit)
    assert isinstance(raised.value.__cause__, Exception) and raised.value.retry_after == 1
    assert after_a_commit.runs == 1
    assert _notes(engine).count("committed once") == 1

    @Counted
    def mid_transaction() -> None:
        with tx() as session:
            pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
            _kill(engine, pid)  # after a statement: its commit might have followed
            session.execute(text("INSERT INTO notes (body) VALUES ('never')"))

    with pytest.raises(DatabaseUnavailable):
        run_retrying(mid_transaction)
    assert mid_transaction.runs == 1


def test_a_database_that_cannot_be_reached_is_unavailable_not_an_error(url: str) -> None:
    unreachable = make_engine("postgresql://postgres@127.0.0.1:1/nothing", pool_size=1, application_name="dps-none")
    tx = Transactions.for_engine(unreachable)

    @Counted
    def use_case() -> None:
        with tx.read() as session:
            session.execute(text("SELECT 1"))

    with pytest.raises(DatabaseUnavailable):
        run_retrying(use_case)
    assert use_case.runs == 2  # a connection refused at checkout: nothing done, so tried once more
    unreachable.dispose()
