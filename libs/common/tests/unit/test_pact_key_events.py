"""The api's key events as every process that authenticates keys reads them (the key event
subscriber's handler, ``dps_common.auth.revocations.KeyEventHandler``, in every service: the api's own
workers, the dispatcher, the connector, the console), written as a consumer-driven message contract
(Pact V4, asynchronous messages) for the api: ``pacts/key-event-subscriber-api.json`` (committed; the
api's suite makes each message from its real outbox after a real revocation and rotation:
services/api/tests/integration/test_pact_provider.py).

The handler reads the envelope's ``type`` and ``data.keyId`` (the key id whose cache entry it drops);
it reads no message header, but hears only what its queue's bindings route to it: the message's
routing key (``routingKey`` in the metadata) is the event type, bare or followed by a shard word. What is recorded is compared with the committed file:
``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

import re

import pytest
from pact import Pact, match

from dps_common.auth.revocations import KEY_EVENTS, KeyEventHandler
from dps_common.messaging.shards import subscriber_bindings
from dps_testing.pacts import ConsumerContract, event_envelope, text

CONTRACT = ConsumerContract("key-event-subscriber")
pact_recorded, pact = CONTRACT.fixtures()
KEY_ID = "k3y1d"


class Cache:
    """A process's key cache, as far as key events reach it."""

    def __init__(self) -> None:
        self.forgotten: list[str] = []

    def forget(self, key_id: str) -> None:
        self.forgotten.append(key_id)

    def forget_all(self) -> None:
        raise AssertionError("a key event drops one key")


def heard(routing_key: str) -> bool:
    """Whether the subscriber's topic bindings route this key to its queue (``*``: one word)."""
    words = routing_key.split(".")
    return any(
        len(pattern.split(".")) == len(words) and all(p in ("*", w) for p, w in zip(pattern.split("."), words))
        for pattern in subscriber_bindings(KEY_EVENTS)
    )


@pytest.mark.parametrize("event_type", KEY_EVENTS)
def test_a_key_event_drops_its_key_from_the_cache(pact: Pact, event_type: str):
    data = {"keyId": text(KEY_ID, r"^[A-Za-z0-9-]+$")}
    (
        pact.upon_receiving(f"a {event_type} event", "Async")
        .given(f"{event_type} published")
        .with_body(event_envelope(event_type, data), "application/json")
        .with_metadata({"routingKey": match.regex(event_type, regex=rf"^{re.escape(event_type)}(\.shard-\d+)?$")})
    )
    cache = Cache()
    handler = KeyEventHandler(cache)

    def consume(body: str | bytes | None, metadata: dict[str, object]) -> None:
        assert body is not None  # pact hands the body over as its own string type
        assert heard(str(metadata["routingKey"]))
        handler(body if isinstance(body, bytes) else str(body))

    pact.verify(consume, "Async")
    assert cache.forgotten == [KEY_ID]
