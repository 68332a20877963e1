"""The dispatcher's durable queue of the api's (and the connector's) events on the broker.

It binds the events exchange for every type (``#``), or with ``EVENTS_SHARDS`` above 1 one queue per
shard of organizations (``dps_common.messaging.shards``). Every worker consumes it, one at a time
(``x-single-active-consumer``): the others stand by and take over when it goes. Consuming is cheap
in batches and splitting one stream between workers would only halve the batches; shards split it by
organization instead, each with its own active consumer and each organization's events in one of
them, in order. The delivery work itself is shared through the database."""

from __future__ import annotations

from kombu.entity import Queue

from dps_common.messaging import events_exchange
from dps_common.messaging.queues import durable_queue_arguments
from dps_common.messaging.shards import SHARD_WORD, shard_binding

from dps_webhooks.settings import Settings


def events_queue(settings: Settings, shard: int | None = None) -> Queue:
    """The queue of every event type (``shard``: of one shard's organizations, ``<queue>.shard-<n>``)."""
    return Queue(
        settings.events_queue if shard is None else f"{settings.events_queue}.{SHARD_WORD}{shard}",
        exchange=events_exchange(settings.events_exchange),
        routing_key="#" if shard is None else shard_binding(shard),
        durable=True,
        auto_delete=False,
        # a quorum queue unless AMQP_QUEUE_TYPE=classic: replicated, it survives a lost broker node
        queue_arguments=durable_queue_arguments(single_active_consumer=True),
    )
