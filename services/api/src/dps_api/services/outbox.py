"""Writing events into the outbox, in the caller's transaction: the shared ``dps_common.outbox``."""

from dps_common.outbox import OUTBOX_CHANNEL, record_event

__all__ = ["OUTBOX_CHANNEL", "record_event"]
