"""Intake of events into deliveries, on the suite's rolled-back transaction: a batch is stored once
per event id (also within the batch), each event reaches exactly its organization's subscribed
endpoints, and the single-event and single-delivery paths follow the same rules."""

from __future__ import annotations

import uuid
from uuid import UUID

from sqlalchemy import func, select

from dps_common.auth.revocations import KEY_REVOKED, KEY_ROTATED

from dps_webhooks.db.models import WebhookDelivery, WebhookEvent
from dps_webhooks.services.intake import (
    MAX_PAYLOAD_BYTES,
    OVERSIZED_MESSAGE,
    IncomingEvent,
    accept_events,
    add_delivery,
    store_event,
)

from webhook_helpers import accept_event, add_endpoint, incoming


def deliveries(session, event: IncomingEvent) -> dict[UUID, tuple[str, bool]]:
    """endpoint id -> (status, scheduled) for the event's deliveries; one per endpoint at most."""
    rows = session.execute(
        select(WebhookDelivery.endpoint_id, WebhookDelivery.status, WebhookDelivery.next_attempt_at).where(
            WebhookDelivery.event_id == event.id
        )
    ).all()
    assert len({row.endpoint_id for row in rows}) == len(rows), "two deliveries of one event to one endpoint"
    return {row.endpoint_id: (row.status, row.next_attempt_at is not None) for row in rows}


def events_stored(session, *events: IncomingEvent) -> int:
    return session.scalar(select(func.count()).where(WebhookEvent.id.in_([event.id for event in events])))


def test_intake_a_batch_stores_each_event_id_once_even_when_repeated_inside_it(tx) -> None:
    organization_id = uuid.uuid4()
    with tx() as session:
        endpoint = add_endpoint(session, organization_id)
    seen_before, first, second = incoming(organization_id), incoming(organization_id), incoming(organization_id)
    with tx() as session:
        assert accept_event(session, seen_before) == 1
    with tx() as session:
        created = accept_events(session, [first, seen_before, second, first, first]).deliveries
    assert created == 2  # first and second once each; seen_before nothing
    with tx() as session:
        assert events_stored(session, first, second, seen_before) == 3
        for event in (first, second, seen_before):
            assert deliveries(session, event) == {endpoint: ("PENDING", True)}
        assert accept_events(session, [first, second]).deliveries == 0  # a redelivered batch is a no-op
        assert accept_events(session, []).deliveries == 0


def test_intake_a_batch_mixing_organizations_reaches_only_each_events_subscribers(tx) -> None:
    acme, globex, initech = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with tx() as session:
        acme_active = add_endpoint(session, acme)
        acme_paused = add_endpoint(session, acme, status="PAUSED")
        add_endpoint(session, acme, status="DISABLED")
        acme_closed_only = add_endpoint(session, acme, event_types=["deal.closed"])
        globex_active = add_endpoint(session, globex, event_types=["quote.approved", "deal.closed"])
        globex_paused = add_endpoint(session, globex, status="PAUSED", event_types=["deal.closed"])
        add_endpoint(session, globex, status="DISABLED")
    approved_acme, closed_acme = incoming(acme), incoming(acme, "deal.closed")
    approved_globex, created_globex = incoming(globex), incoming(globex, "quote.created")
    nobody = incoming(initech)  # an organization without endpoints
    with tx() as session:
        created = accept_events(session, [approved_acme, approved_globex, nobody, closed_acme, created_globex]).deliveries
    assert created == 6
    with tx() as session:
        assert events_stored(session, approved_acme, closed_acme, approved_globex, created_globex, nobody) == 5
        assert deliveries(session, approved_acme) == {acme_active: ("PENDING", True), acme_paused: ("PENDING", False)}
        assert deliveries(session, closed_acme) == {
            acme_active: ("PENDING", True),
            acme_paused: ("PENDING", False),  # held until resumed
            acme_closed_only: ("PENDING", True),
        }
        assert deliveries(session, approved_globex) == {globex_active: ("PENDING", True)}
        assert deliveries(session, created_globex) == {}  # no endpoint subscribes to it
        assert globex_paused not in deliveries(session, approved_globex)
        assert deliveries(session, nobody) == {}


def test_intake_an_oversized_event_is_exhausted_at_once_in_a_batch_and_alone(tx) -> None:
    organization_id = uuid.uuid4()
    with tx() as session:
        endpoint = add_endpoint(session, organization_id)
    small, big = incoming(organization_id), incoming(organization_id, data={"blob": "x" * MAX_PAYLOAD_BYTES})
    with tx() as session:
        assert accept_events(session, [small, big]).deliveries == 2
    with tx() as session:
        assert deliveries(session, small) == {endpoint: ("PENDING", True)}
        assert deliveries(session, big) == {endpoint: ("EXHAUSTED", False)}
        batch_row = session.scalars(select(WebhookDelivery).where(WebhookDelivery.event_id == big.id)).one()
        assert session.scalar(select(WebhookEvent.body).where(WebhookEvent.id == big.id)) is None
        other = incoming(organization_id, data={"blob": "y" * MAX_PAYLOAD_BYTES})
        assert store_event(session, other) is True and store_event(session, other) is False
        single = add_delivery(session, other, endpoint)  # the manual-retry path: the same rule
        for row in (batch_row, single):
            assert (row.status, row.next_attempt_at, row.last_error_message) == ("EXHAUSTED", None, OVERSIZED_MESSAGE)
            assert row.completed_at is not None and row.attempt_count == 0
        held = add_delivery(session, small, endpoint, held=True, is_test=True)
        assert (held.status, held.next_attempt_at, held.is_test, held.completed_at) == ("PENDING", None, True, None)


def test_intake_internal_events_are_never_delivered_to_customers(tx) -> None:
    """A key revocation or rotation travels on the events exchange to every service's key cache; it
    is not a customer event, even for an endpoint subscribed to everything or to its very name."""
    organization_id = uuid.uuid4()
    with tx() as session:
        add_endpoint(session, organization_id)
        add_endpoint(session, organization_id, event_types=["internal.api_key.revoked"])
    revoked, rotated = incoming(organization_id, KEY_REVOKED), incoming(organization_id, KEY_ROTATED)
    customer_event = incoming(organization_id)
    with tx() as session:
        assert accept_events(session, [revoked, customer_event, rotated]).deliveries == 1  # the customer event's
        assert accept_events(session, [revoked]).deliveries == 0
    with tx() as session:
        assert events_stored(session, revoked, rotated) == 0
        assert deliveries(session, revoked) == deliveries(session, rotated) == {}
