"""The api's key events as every process that authenticates keys reads them (the key event
subscriber's handler, ``dps_common.auth.revocations.KeyEventHandler``, in every service: the api's own
workers, the dispatcher, the connector, the console), written as a consumer-driven message contract
(Pact V4, asynchronous messages) for the api: ``pacts/key-event-subscriber-api.json`` (committed; the
api's suite makes each message from its real outbox after a real revocation and rotation:
services/api/tests/http/test_pact_provider.py).

The handler reads the envelope's ``type`` and ``data.keyId`` (the key id whose cache entry it drops);
it reads no message header. What is recorded is compared with the committed file:
``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

import pytest
from pact import Pact, match

from dps_common.auth.revocations import KEY_EVENTS, KeyEventHandler
from dps_testing.pacts import ConsumerContract, event_envelope

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


@pytest.mark.parametrize("event_type", KEY_EVENTS)
def test_a_key_event_drops_its_key_from_the_cache(pact: Pact, event_type: str):
    data = {"keyId": match.regex(KEY_ID, regex=r"^[A-Za-z0-9-]+$")}
    (
        pact.upon_receiving(f"a {event_type} event", "Async")
        .given(f"{event_type} published")
        .with_body(event_envelope(event_type, data), "application/json")
    )
    cache = Cache()
    handler = KeyEventHandler(cache)

    def consume(body: str | bytes | None, metadata: dict[str, object]) -> None:
        assert body is not None  # pact hands the body over as its own string type
        handler(body if isinstance(body, bytes) else str(body))

    pact.verify(consume, "Async")
    assert cache.forgotten == [KEY_ID]
