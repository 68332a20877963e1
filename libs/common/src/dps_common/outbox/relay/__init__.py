"""The outbox relay (``dps-outbox-relay``): publishes a service's committed outbox events to the broker.

Rows are claimed a batch at a time with ``FOR UPDATE SKIP LOCKED`` (any number of relays can run),
published back to back with publisher confirms (awaited once per batch), and the confirmed ones
marked ``published_at`` in the transaction that holds their lock, committed only after the broker
confirmed. A crash or a lost broker leaves unconfirmed rows unpublished, to be sent again:
consumers see duplicates, never gaps.
"""

from dps_common.outbox.relay.relay import OutboxRelay
from dps_common.outbox.relay.settings import RelaySettings

__all__ = ["OutboxRelay", "RelaySettings"]
