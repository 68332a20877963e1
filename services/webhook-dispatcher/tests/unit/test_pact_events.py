"""The events the dispatcher consumes from the api, as it reads them (``IncomingEvent.from_envelope``),
written as a consumer-driven message contract (Pact V4, asynchronous messages) for the api:
``pacts/webhook-dispatcher-api.json`` (committed; the api's suite produces each message from its real
outbox, as its relay publishes it: services/api/tests/http/test_pact_provider.py).

The dispatcher reads the envelope's ``id``, ``organizationId``, ``type`` and ``occurredAt`` and sends
the body on as is; ``data`` is the customer's (its shape is the API document's, not this contract's).
What is recorded is compared with the committed file: ``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pact import Pact, match

from dps_testing.pacts import ConsumerContract

from dps_webhooks.services.intake import IncomingEvent

CONTRACT = ConsumerContract("webhook-dispatcher")
ORG = "00000000-0000-4000-8000-000000000002"
EVENT = "00000000-0000-4000-8000-000000000009"
OCCURRED_AT = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from CONTRACT.recorded(tmp_path_factory.mktemp("pacts"))


@pytest.fixture
def pact(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
    yield from CONTRACT.pact(recorded, monkeypatch)


def envelope(event_type: str) -> dict[str, Any]:
    return {
        "id": match.uuid(EVENT),
        "type": event_type,
        "version": match.int(1),
        "occurredAt": match.regex("2027-01-01T10:00:00.123456Z", regex=OCCURRED_AT),
        "organizationId": match.uuid(ORG),
        "data": match.type({}),  # passed through to the customer as is
    }


def test_a_quote_approved_event_becomes_an_incoming_event(pact: Pact):
    (
        pact.upon_receiving("a quote.approved event", "Async")
        .given("a quote approved")
        .with_body(envelope("quote.approved"), "application/json")
    )
    read: list[IncomingEvent] = []

    def consume(body: str | bytes | None, metadata: dict[str, object]) -> None:
        assert body is not None
        # the message's body as the consumer takes it off the queue (pact hands it over as its own string type)
        read.append(IncomingEvent.from_envelope(body.decode() if isinstance(body, bytes) else str(body)))

    pact.verify(consume, "Async")
    [event] = read
    assert (event.id, event.organization_id, event.type) == (UUID(EVENT), UUID(ORG), "quote.approved")
    assert event.occurred_at.tzinfo is not None
