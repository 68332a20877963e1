"""The events stream split into shards by organization, without a broker plugin.

With ``EVENTS_SHARDS`` above 1 the relays append the organization's shard to every routing key as a
last word (``quote.updated`` -> ``quote.updated.shard-3``), and a consumer that wants one shard
binds ``#.shard-3``: a topic exchange does the rest, on RabbitMQ and on kombu's filesystem
transport (``make run``) alike. The shard comes from a stable hash of the organization id, so each
organization's events all go to one queue, in the order the relay published them. With one shard
(the default) routing keys are the bare event types, as before.

Subscribers that bind event types (``Subscriber``) bind each type both bare and followed by one word,
so they hear an event whichever way it was published.
"""

from __future__ import annotations

import hashlib
from uuid import UUID

SHARD_WORD = "shard-"
MAX_SHARDS = 64


def shard_of(organization_id: UUID, shards: int) -> int:
    """The organization's shard among ``shards``: the same on every host and after every restart
    (a hash of the id's bytes, not Python's salted ``hash``)."""
    if shards <= 1:
        return 0
    digest = hashlib.blake2b(organization_id.bytes, digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def routing_key(event_type: str, organization_id: UUID, shards: int) -> str:
    """The routing key of an event: its type, and with several shards its organization's shard."""
    if shards <= 1:
        return event_type
    return f"{event_type}.{SHARD_WORD}{shard_of(organization_id, shards)}"


def shard_binding(shard: int) -> str:
    """The topic pattern of one shard's events (every type)."""
    return f"#.{SHARD_WORD}{shard}"


def subscriber_bindings(routing_keys: tuple[str, ...]) -> list[str]:
    """The patterns a subscriber to these event types binds: each bare and with a shard word."""
    return [pattern for key in routing_keys for pattern in (key, f"{key}.*")]
