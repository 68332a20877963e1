"""Key events: a revoked or rotated API key is dropped from every process's cache at once.

The api records ``internal.api_key.revoked`` / ``internal.api_key.rotated`` in its outbox in the
transaction that changes the key; the relay publishes them to the events exchange. Every process
that authenticates keys (each gunicorn worker of every service) subscribes with a queue of its own
(``dps_common.messaging.subscriber``) and forgets the key id the event names. The events are
internal: the webhook dispatcher never delivers ``internal.*`` types to customers.

The cache's TTL stays the bound when the broker is late or down. Whenever the subscription starts
again after a gap, the whole cache is dropped, since events published meanwhile were not received.
"""

from __future__ import annotations

import logging
from typing import Any

from dps_common.auth.authenticator import ForgetsKeys
from dps_common.json import loads
from dps_common.messaging.subscriber import Subscriber

log = logging.getLogger("dps.auth.revocations")

KEY_REVOKED = "internal.api_key.revoked"
KEY_ROTATED = "internal.api_key.rotated"
KEY_EVENTS = (KEY_REVOKED, KEY_ROTATED)


def key_event_data(api_key_id: str, key_id: str) -> dict[str, Any]:
    """An event's ``data``: the key's id (its row) and the key id that stopped working (the
    ``dps_<keyid>_`` part, what caches are keyed by; never the secret)."""
    return {"apiKeyId": api_key_id, "keyId": key_id}


class KeyEventHandler:
    """Applies key events to a process's cache of key lookups."""

    def __init__(self, keys: ForgetsKeys):
        self._keys = keys

    def __call__(self, body: bytes | str) -> None:
        envelope = loads(body)
        if not isinstance(envelope, dict) or envelope.get("type") not in KEY_EVENTS:
            return
        data = envelope.get("data")
        key_id = data.get("keyId") if isinstance(data, dict) else None
        if not isinstance(key_id, str) or not key_id:
            log.warning("key event without a key id ignored", extra={"eventId": envelope.get("id")})
            return
        self._keys.forget(key_id)
        log.info("key dropped from the cache", extra={"eventType": envelope["type"], "keyId": key_id})

    def resubscribed(self) -> None:
        self._keys.forget_all()


def key_event_subscriber(amqp_url: str, exchange: str, keys: ForgetsKeys) -> Subscriber:
    """A subscriber (not started) that drops revoked and rotated keys from ``keys``."""
    handler = KeyEventHandler(keys)
    return Subscriber(amqp_url, exchange, KEY_EVENTS, handler, purpose="key-events", on_connected=handler.resubscribed)


def start_key_events(amqp_url: str, exchange: str, keys: ForgetsKeys) -> Subscriber | None:
    """In a process that serves requests (after the fork): subscribe ``keys`` to key events. Without
    a broker URL, none: the TTL alone bounds revocation."""
    if not amqp_url:
        log.info("no AMQP_URL: key revocations take effect within the key cache TTL only")
        return None
    subscriber = key_event_subscriber(amqp_url, exchange, keys)
    subscriber.start()
    return subscriber
