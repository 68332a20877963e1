"""The read paths of Transactions on a real PostgreSQL."""

import threading
import time

import psycopg
import pytest
from sqlalchemy import text

from dps_common.db import Transactions, make_engine
from dps_testing.services import fresh_database


@pytest.fixture(scope="module")
def engine():
    with fresh_database("dps_common_db") as url:
        engine = make_engine(url, application_name="dps-test")
        yield engine
        engine.dispose()


def test_reads_run_in_autocommit_and_writes_in_a_transaction(engine):
    tx = Transactions.for_engine(engine)
    with tx.read() as session:
        assert session.execute(text("SELECT now() = statement_timestamp()")).scalar() is True  # no open transaction
    with tx() as session:
        session.execute(text("SELECT pg_sleep(0.01)"))
        assert session.execute(text("SELECT now() = statement_timestamp()")).scalar() is False


def test_read_cursor_reuses_its_connection_and_replaces_one_the_server_ended(engine):
    tx = Transactions.for_engine(engine)
    with tx.read_cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), current_setting('application_name')")
        first_pid, name = cursor.fetchone()
    assert name == "dps-test"
    with tx.read_cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] == first_pid
    _terminate(engine, first_pid)  # the server ends that idle session, as a restart would
    with tx.read_cursor() as cursor:  # found closed at checkout and replaced: no request fails
        cursor.execute("SELECT pg_backend_pid()")
        second_pid = cursor.fetchone()[0]
    assert second_pid != first_pid
    tx.dispose()
    assert _gone(engine, second_pid), "dispose left the read connection open"


def test_a_transaction_on_a_pooled_connection_the_server_ended_runs_on_a_fresh_one(engine):
    """Stale pooled connections fail no request, however long after the server ended them."""
    tx = Transactions.for_engine(engine)
    with tx() as session:
        first_pid = session.execute(text("SELECT pg_backend_pid()")).scalar()
    _terminate(engine, first_pid)
    with tx() as session:
        assert session.execute(text("SELECT pg_backend_pid()")).scalar() != first_pid
    with tx.read() as session:
        assert session.execute(text("SELECT 1")).scalar() == 1


def _admin(engine) -> psycopg.Connection:
    """A connection of its own (the pool's might be the very one to end)."""
    return psycopg.connect(engine.url.set(drivername="postgresql").render_as_string(hide_password=False), autocommit=True)


def _terminate(engine, pid: int) -> None:
    with _admin(engine) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert _gone(engine, pid)


def _gone(engine, pid: int) -> bool:
    """Whether the server session has ended; its backend exits just after the client closes."""
    with _admin(engine) as admin:
        for _ in range(100):
            if not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
                return True
            time.sleep(0.05)
    return False


def test_read_cursor_holds_at_most_the_pools_connections():
    """Under gevent every client connection is a greenlet: connections per reader would be unbounded.
    The read connections are the pool's: at most its size plus overflow in use, its size kept."""
    with fresh_database("dps_common_db_pool") as url:
        engine = make_engine(url, pool_size=2, max_overflow=1, application_name="dps-test-pool")
        tx = Transactions.for_engine(engine)
        pids: set[int] = set()

        def read() -> None:
            with tx.read_cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid(), pg_sleep(0.05)")
                pids.add(cursor.fetchone()[0])

        readers = [threading.Thread(target=read) for _ in range(12)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout=30)
        assert 1 <= len(pids) <= 3
        assert engine.pool.checkedin() <= 2  # kept between uses: the pool size
        with tx() as session:  # the pool's next user gets it out of autocommit
            session.execute(text("SELECT pg_sleep(0.01)"))
            assert session.execute(text("SELECT now() = statement_timestamp()")).scalar() is False
        tx.dispose()
        engine.dispose()
