"""The event outbox, for every service that publishes events: a service writes each event into its
own ``outbox_events`` table in the transaction of the change it describes (``record_event``), and
the relay (``dps-outbox-relay``, ``dps_common.outbox.relay``) publishes the committed rows.

A service adds the table to its metadata with ``outbox_table(Base.metadata)`` and creates it in a
migration with ``dps_common.outbox.migration.create_outbox(op)``."""

from dps_common.outbox.record import record_event
from dps_common.outbox.table import OUTBOX_CHANNEL, outbox_table

__all__ = ["OUTBOX_CHANNEL", "outbox_table", "record_event"]
