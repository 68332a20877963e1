"""The events the dispatcher consumes, as its consumer reads a message off its queue
(``consumer._parse``: the envelope and the ``X-Request-Id`` header), written as consumer-driven message
contracts (Pact V4, asynchronous messages), one per producer: ``pacts/webhook-dispatcher-api.json``
(an event of each family the api publishes: product, pricebook, opportunity, quote, approval,
approval_group, approval_rule_group, approval_rule, deal_group) and ``pacts/webhook-dispatcher-billing-connector.json`` (the
connector's ``billing.*`` events: a connection made and removed, a push done and one failed).
Committed; each producer's suite makes every message from its real outbox, as its relay publishes it
(services/api/tests/integration/test_pact_provider.py, services/billing-connector/tests/integration/test_pact_provider.py).

The dispatcher reads the envelope's ``id``, ``organizationId``, ``type`` and ``occurredAt`` and the
request id header, and sends the body on as is; ``data`` is the customer's (its shape is the API
document's, not this contract's). The api's ``internal.*`` key events are read by the key event
subscriber (``libs/common/tests/unit/test_pact_key_events.py``), never stored nor delivered here.
What is recorded is compared with the committed files: ``PACT_WRITE=1 pytest <this file>`` rewrites them.
"""

from __future__ import annotations

from uuid import UUID

import pytest
from kombu.message import Message
from pact import Pact

from dps_testing.pacts import EVENT_ID, EVENT_ORG, ConsumerContract, event_envelope, request_id_header

from dps_webhooks.services.intake import IncomingEvent
from dps_webhooks.workers.consumers import _parse

API = ConsumerContract("webhook-dispatcher", "api")
BILLING = ConsumerContract("webhook-dispatcher", "billing-connector")
api_recorded, api_pact = API.fixtures("api_pact")
billing_recorded, billing_pact = BILLING.fixtures("billing_pact")
API_TYPES = ("opportunity.created", "product.created", "pricebook.created", "quote.created",
             "approval.requested", "approval.approved", "quote.approved",
             "approval_group.created", "approval_rule_group.created", "approval_rule.created", "deal_group.created")
BILLING_TYPES = ("billing.connection.connected", "billing.quote_pushed", "billing.push_failed",
                 "billing.connection.removed")
REQUEST_ID = "0123456789abcdef0123456789abcdef"


def consumed(pact: Pact, event_type: str) -> None:
    """The message as the consumer takes it off the queue: its body and headers, parsed."""
    (
        pact.upon_receiving(f"a {event_type} event", "Async")
        .given(f"{event_type} published")
        .with_body(event_envelope(event_type), "application/json")
        .with_metadata(request_id_header(REQUEST_ID))
    )
    read: list[IncomingEvent | None] = []

    def consume(body: str | bytes | None, metadata: dict[str, object]) -> None:
        assert body is not None  # pact hands the body over as its own string type
        text = body.decode() if isinstance(body, bytes) else str(body)
        read.append(_parse(Message(body=text, headers=dict(metadata))))

    pact.verify(consume, "Async")
    [event] = read
    assert event is not None, "the consumer rejected the message"
    assert (event.id, event.organization_id, event.type) == (UUID(EVENT_ID), UUID(EVENT_ORG), event_type)
    assert event.occurred_at.tzinfo is not None and event.request_id == REQUEST_ID


@pytest.mark.parametrize("event_type", API_TYPES)
def test_an_api_event_becomes_an_incoming_event(api_pact: Pact, event_type: str):
    consumed(api_pact, event_type)


@pytest.mark.parametrize("event_type", BILLING_TYPES)
def test_a_billing_event_becomes_an_incoming_event(billing_pact: Pact, event_type: str):
    consumed(billing_pact, event_type)
