"""The events the dispatcher consumes from the api, as it reads them (``IncomingEvent.from_envelope``),
written as a consumer-driven message contract (Pact V4, asynchronous messages) for the api:
``pacts/webhook-dispatcher-api.json`` (committed; the api's suite produces each message from its real
outbox, as its relay publishes it: services/api/tests/http/test_pact_provider.py).

The dispatcher reads the envelope's ``id``, ``organizationId``, ``type`` and ``occurredAt`` and sends
the body on as is; ``data`` is the customer's (its shape is the API document's, not this contract's).
What is recorded is compared with the committed file: ``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pact import Pact, match

from dps_webhooks.services.intake import IncomingEvent

PACT_FILE = next(p for p in Path(__file__).resolve().parents if (p / "pacts").is_dir()) / "pacts" / "webhook-dispatcher-api.json"
ORG = "00000000-0000-4000-8000-000000000002"
EVENT = "00000000-0000-4000-8000-000000000009"
OCCURRED_AT = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    written = tmp_path_factory.mktemp("pacts")
    yield written
    recorded = json.loads((written / PACT_FILE.name).read_text())
    if os.environ.get("PACT_WRITE"):
        PACT_FILE.parent.mkdir(exist_ok=True)
        PACT_FILE.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    committed = json.loads(PACT_FILE.read_text())["interactions"]
    # each interaction this run recorded is in the committed pact as recorded (-k may select some)
    changed = [i["description"] for i in recorded["interactions"] if i not in committed]
    assert not changed, (
        f"{changed}: what the dispatcher reads changed: rewrite {PACT_FILE} with PACT_WRITE=1 and commit it"
    )


@pytest.fixture
def pact(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
    monkeypatch.setenv("PACT_DO_NOT_TRACK", "true")  # the pact core's usage report: no call out of the tests
    pact = Pact("webhook-dispatcher", "api").with_specification("V4")
    yield pact
    pact.write_file(recorded)


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
