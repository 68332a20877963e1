"""``dps_common.work_queue.wakeup``: a notification wakes a listener at commit, never for a rollback;
the background listener sets its event (or calls its function) on each one, reconnects after its
connection is killed (and wakes once then, for what it may have missed), and ends when told to."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text

from dps_common.db import Transactions, sqlalchemy_url
from dps_common.work_queue import Wakeup, notify, wake_on_notify
from dps_testing.services import fresh_database
from dps_testing.transactions import committed

CHANNEL = "dps_wakeup_test"
LISTENER = "dps-wakeup-test-listen"
WAIT_SECONDS = 10.0  # a deadline for what must happen, never a measured time
QUIET_SECONDS = 0.5  # a window for what must not


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with fresh_database("dps_wakeup_test") as url:
        yield url


@pytest.fixture(scope="module")
def tx(database_url: str) -> Iterator[Transactions]:
    with committed(database_url, "dps-wakeup-test-writer") as transactions:
        yield transactions


def _kill_listeners(database_url: str) -> int:
    with psycopg.connect(sqlalchemy_url(database_url).replace("postgresql+psycopg", "postgresql"),
                         autocommit=True) as admin:
        return len(admin.execute(
            # this database's listener only: another run's tests may listen under the same name
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()", (LISTENER,)
        ).fetchall())


def test_a_notification_arrives_at_commit_and_never_for_a_rollback(database_url, tx):
    wakeup = Wakeup(database_url, CHANNEL, LISTENER)
    wakeup.listen()
    try:
        with tx() as session:
            notify(session, CHANNEL)
            notify(session, CHANNEL)
        assert wakeup.wait(WAIT_SECONDS)
        assert not wakeup.wait(QUIET_SECONDS)  # repeats within one transaction fold into one
        with pytest.raises(RuntimeError), tx() as session:
            notify(session, CHANNEL)
            raise RuntimeError("rolled back")
        assert not wakeup.wait(QUIET_SECONDS)
    finally:
        wakeup.close()


def test_a_channel_must_be_a_plain_identifier(database_url):
    with pytest.raises(ValueError):
        Wakeup(database_url, "jobs; DROP TABLE x", LISTENER)


def test_the_background_listener_sets_its_event_and_survives_a_killed_connection(database_url, tx):
    wake, stopping = threading.Event(), threading.Event()
    thread = wake_on_notify(Wakeup(database_url, CHANNEL, LISTENER), wake, stopping)
    try:
        assert wake.wait(WAIT_SECONDS)  # once connected: whatever was notified before is looked for
        wake.clear()
        with tx() as session:
            notify(session, CHANNEL)
        assert wake.wait(WAIT_SECONDS)
        wake.clear()

        assert _kill_listeners(database_url) == 1
        assert wake.wait(WAIT_SECONDS)  # reconnected, and woke for what it may have missed
        wake.clear()
        with tx() as session:
            notify(session, CHANNEL)
        assert wake.wait(WAIT_SECONDS)
    finally:
        stopping.set()
        thread.join(WAIT_SECONDS)
    assert not thread.is_alive()
    # its connection closed with it (the server's backend leaves pg_stat_activity a moment after the close)
    deadline = time.monotonic() + WAIT_SECONDS
    while _listening(tx) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _listening(tx) == 0


def _listening(tx: Transactions) -> int:
    with tx() as session:
        return session.execute(text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :name"
                                    " AND datname = current_database()"), {"name": LISTENER}).scalar_one()


def test_the_background_listener_calls_its_function_on_each_notification(database_url, tx):
    calls: list[None] = []
    called, stopping = threading.Event(), threading.Event()

    def woken() -> None:
        calls.append(None)
        called.set()

    thread = wake_on_notify(Wakeup(database_url, CHANNEL, LISTENER), woken, stopping)
    try:
        assert called.wait(WAIT_SECONDS)  # once connected
        called.clear()
        with tx() as session:
            notify(session, CHANNEL)
        assert called.wait(WAIT_SECONDS)
        assert len(calls) == 2
    finally:
        stopping.set()
        thread.join(WAIT_SECONDS)
    assert not thread.is_alive()
