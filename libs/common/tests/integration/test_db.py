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


def test_read_cursor_reuses_its_connection_and_replaces_a_broken_one(engine):
    tx = Transactions.for_engine(engine)
    with tx.read_cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), current_setting('application_name')")
        first_pid, name = cursor.fetchone()
    assert name == "dps-test"
    with tx.read_cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] == first_pid
    with engine.connect() as admin:  # the server ends that session, as a restart would
        admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first_pid})
    with pytest.raises(psycopg.OperationalError), tx.read_cursor() as cursor:
        cursor.execute("SELECT 1")  # the one request that meets the dead connection fails
    with tx.read_cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        second_pid = cursor.fetchone()[0]
    assert second_pid != first_pid
    tx.dispose()
    assert _gone(engine, second_pid), "dispose left the read connection open"


def _gone(engine, pid: int) -> bool:
    """Whether the server session has ended; its backend exits just after the client closes."""
    for _ in range(100):
        with engine.connect() as admin:
            if not admin.execute(text("SELECT 1 FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}).first():
                return True
        time.sleep(0.05)
    return False


def test_read_cursor_holds_at_most_the_pool_size_of_connections(engine):
    """Under gevent every client connection is a greenlet: connections per reader would be unbounded."""
    tx = Transactions.for_engine(engine)  # pool size 5
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
    tx.dispose()
    assert 1 <= len(pids) <= 5
