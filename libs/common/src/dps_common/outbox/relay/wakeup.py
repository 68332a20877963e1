"""Waking the relay when events commit: ``LISTEN`` on a connection of its own (``dps_common.wakeup``).

Every insert into the outbox notifies ``OUTBOX_CHANNEL`` (the statement trigger of ``dps_common.outbox.migration``), delivered at
commit; without a notification (or without the connection) the relay still polls, so a lost
notification only delays an event by one poll interval."""

from __future__ import annotations

from dps_common.outbox.table import OUTBOX_CHANNEL
from dps_common.wakeup import Wakeup

APPLICATION_NAME = "dps-outbox-relay-listen"


class OutboxWakeup(Wakeup):
    def __init__(self, database_url: str):
        super().__init__(database_url, OUTBOX_CHANNEL, APPLICATION_NAME)
