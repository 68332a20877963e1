"""Waking the relay when events commit: ``LISTEN`` on a connection of its own.

Every insert into the outbox notifies ``OUTBOX_CHANNEL`` (the statement trigger of ``dps_common.outbox.migration``), delivered at
commit; without a notification (or without the connection) the relay still polls, so a lost
notification only delays an event by one poll interval."""

from __future__ import annotations

import logging

import psycopg
from sqlalchemy.engine import make_url

from dps_common.db import sqlalchemy_url
from dps_common.outbox.table import OUTBOX_CHANNEL

log = logging.getLogger("dps.relay.wakeup")

CONNECT_TIMEOUT_SECONDS = 5


class OutboxWakeup:
    def __init__(self, database_url: str):
        url = make_url(sqlalchemy_url(database_url)).set(drivername="postgresql")
        self._conninfo = url.update_query_dict({"application_name": "dps-outbox-relay-listen"})
        self._connection: psycopg.Connection | None = None

    def listen(self) -> None:
        """Open the listening connection if needed (raises ``psycopg.Error`` when the database is away).

        Call before looking for work, so an event committed meanwhile still wakes the next wait."""
        if self._connection is not None and not self._connection.closed and not self._connection.broken:
            return
        self.close()
        connection = psycopg.connect(
            self._conninfo.render_as_string(hide_password=False), autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
        )
        connection.execute(f"LISTEN {OUTBOX_CHANNEL}")
        self._connection = connection

    def wait(self, timeout: float) -> bool:
        """Block until a notification or ``timeout``; True when notified."""
        if self._connection is None:
            return False
        try:
            for _ in self._connection.notifies(timeout=timeout, stop_after=1):
                return True
        except psycopg.Error:
            log.warning("outbox listen connection lost")
            self.close()
        return False

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
