"""Waking a polling process when work commits: PostgreSQL ``LISTEN``/``NOTIFY`` on a connection of
its own.

A writer calls ``notify(session, channel)`` in the transaction that makes work (or a statement
trigger does); PostgreSQL delivers the notification at commit, never for a rollback, and folds
repeats within a transaction into one. The process keeps polling as before: a lost notification
(the listening connection dropped, the database restarted) only delays work by one poll interval.

- ``Wakeup``: one listening connection, for a loop that waits on it itself (the outbox relay).
- ``wake_on_notify``: a daemon thread that sets an ``Event`` (or calls a function) on every
  notification, for a loop that already sleeps on that event (the billing and webhook workers),
  reconnecting when the connection drops.

A queue's ``WorkQueue.notify`` and ``WorkQueue.wakeup`` are these on its channel.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from select import select as wait_readable

import psycopg
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from dps_common.db import sqlalchemy_url
from dps_common.db_retry import OutageLog

log = logging.getLogger("dps.wakeup")

CONNECT_TIMEOUT_SECONDS = 5
RECONNECT_SECONDS = 1.0
_SLICE_SECONDS = 1.0  # how soon the listener thread notices it should stop


def notify(session: Session, channel: str) -> None:
    """Wake ``channel``'s listeners when this transaction commits."""
    session.connection().execute(select(func.pg_notify(channel, "")))


class Wakeup:
    def __init__(self, database_url: str, channel: str, application_name: str):
        if not channel.isidentifier():
            raise ValueError(f"a channel is a plain identifier, got {channel!r}")
        url = make_url(sqlalchemy_url(database_url)).set(drivername="postgresql")
        self.channel = channel
        self._conninfo = url.update_query_dict({"application_name": application_name})
        self._connection: psycopg.Connection | None = None

    def listen(self) -> None:
        """Open the listening connection if needed (raises ``psycopg.Error`` when the database is away).

        Call before looking for work, so work committed meanwhile still wakes the next wait."""
        if self._connection is not None and not self._connection.closed and not self._connection.broken:
            return
        self.close()
        connection = psycopg.connect(
            self._conninfo.render_as_string(hide_password=False), autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
        )
        connection.execute(f"LISTEN {self.channel}")
        self._connection = connection

    @property
    def listening(self) -> bool:
        return self._connection is not None and not self._connection.closed and not self._connection.broken

    def wait(self, timeout: float) -> bool:
        """Block until a notification or ``timeout``; True when notified.

        Sleeps on the connection's socket itself: psycopg's ``notifies(timeout=...)`` wakes every
        0.1 s to look for interrupts, ten wake-ups a second of an idle process's CPU. Whatever libpq
        had read already is taken first, so the socket's silence means nothing is waiting."""
        connection = self._connection
        if connection is None:
            return False
        try:
            for _ in connection.notifies(timeout=0, stop_after=1):
                return True
            ready, _, _ = wait_readable([connection.fileno()], [], [], max(0.0, timeout))
            if ready:
                for _ in connection.notifies(timeout=0, stop_after=1):
                    return True
                if connection.closed or connection.broken:
                    raise psycopg.OperationalError("the listen connection closed")
        except (psycopg.Error, OSError, ValueError):
            log.warning("listen connection lost", extra={"channel": self.channel})
            self.close()
        return False

    def drain(self) -> None:
        """Discard the notifications already received, without waiting: call right before looking
        for work, which finds whatever they announced (a notification is sent at commit, so its
        work is visible to a look that starts after it arrived). Without this, every notification
        of a batch already handled would wake one more, empty, look."""
        if self._connection is None:
            return
        try:
            for _ in self._connection.notifies(timeout=0):
                pass
        except psycopg.Error:
            log.warning("listen connection lost", extra={"channel": self.channel})
            self.close()

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def wake_on_notify(
    wakeup: Wakeup, wake: threading.Event | Callable[[], None], stopping: threading.Event
) -> threading.Thread:
    """Start a daemon thread that sets ``wake`` (or calls it) on each notification of ``wakeup``'s
    channel (and once after each (re)connection: work may have been notified while nobody listened),
    until ``stopping`` is set. It closes the connection when it ends."""
    woken = wake.set if isinstance(wake, threading.Event) else wake

    def run() -> None:
        database = OutageLog(log, f"listener of {wakeup.channel}")  # an outage: one line, not one a second
        try:
            while not stopping.is_set():
                if not wakeup.listening:
                    try:
                        wakeup.listen()
                    except psycopg.Error as exc:
                        database.failed(exc)
                        stopping.wait(RECONNECT_SECONDS)
                        continue
                    database.succeeded()
                    woken()
                if wakeup.wait(_SLICE_SECONDS):
                    woken()
        finally:
            wakeup.close()

    thread = threading.Thread(target=run, name=f"wakeup-{wakeup.channel}", daemon=True)
    thread.start()
    return thread
