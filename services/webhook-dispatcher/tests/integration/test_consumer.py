"""The event consumer on a RabbitMQ node of its own (one test restarts it) and its own committed database:
one delivery per subscribed endpoint, duplicates absorbed, the ack only after the commit, garbage
dropped without a poison loop, and a broker restart ridden out."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from uuid import UUID, uuid4

import psycopg
import pytest
from kombu import Producer, Queue
from sqlalchemy import func, select

from dps_common.db import Transactions
from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_common.messaging import EventPublisher, OutgoingEvent, connect, events_exchange
from dps_testing.broker import PrivateBroker, private_broker, publish_one
from dps_testing.services import fresh_database
from dps_testing.transactions import committed

from dps_webhooks.adapters import events_queue as queue_module
from dps_webhooks.db.migrate import upgrade
from dps_webhooks.db.models import WebhookDelivery, WebhookEvent
from dps_webhooks.settings import Settings
from dps_webhooks.workers.consumers import EventConsumer

import webhook_helpers as helpers

EXCHANGE = "test.wh.events"
CONSUMER_APPLICATION = "dps-wh-consumer-test"
WAIT_SECONDS = 60


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with fresh_database("dps_wh_consumer") as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="module")
def tx(database_url: str) -> Iterator[Transactions]:
    """The test's own transactions (endpoints, checks)."""
    with committed(database_url, "dps-wh-consumer-test-checks") as tx:
        yield tx


@pytest.fixture(scope="module")
def broker() -> Iterator[PrivateBroker]:
    """A RabbitMQ node of this module's own: one test stops and starts it."""
    with private_broker() as broker:
        yield broker


@pytest.fixture(scope="module")
def amqp_url(broker: PrivateBroker) -> str:
    return broker.url


@pytest.fixture(scope="module")
def settings(database_url: str, amqp_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        cursor_secret=b"consumer-test-cursor-0123456789abcdef",
        secret_key=bytes(32),
        api_url="https://127.0.0.1:9",  # never called: the consumer checks no keys
        internal_api_token="consumer-test-internal-token-0123456789",
        amqp_url=amqp_url,
        events_exchange=EXCHANGE,
        events_queue="test.wh.consumer",
    )


@pytest.fixture(scope="module")
def events_queue(settings: Settings) -> Queue:
    """The consumer's own queue, declared the same way, so events published first are kept."""
    queue = queue_module.events_queue(settings)
    with connect(settings.amqp_url) as connection:
        queue(connection.default_channel).declare()
    return queue


@pytest.fixture
def consumer(settings: Settings, database_url: str, events_queue: Queue) -> Iterator[None]:
    stop = threading.Event()
    with committed(database_url, CONSUMER_APPLICATION) as consumer_tx:
        thread = threading.Thread(target=EventConsumer(settings, consumer_tx).run, args=(stop,), daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=30)
    assert not thread.is_alive(), "the consumer did not stop when asked"


@pytest.fixture
def publish(settings: Settings) -> Iterator[Callable[[dict], None]]:
    publisher = EventPublisher(settings.amqp_url, EXCHANGE)
    yield lambda envelope: publish_one(publisher, envelope)
    publisher.close()


def add_endpoint(tx: Transactions, organization_id: UUID, status: str = "ACTIVE", event_types=()) -> UUID:
    with tx() as session:
        return helpers.add_endpoint(session, organization_id, status=status, event_types=event_types)


def deliveries_of(tx: Transactions, event_id: str) -> dict[UUID, tuple[str, bool]]:
    """endpoint id -> (status, scheduled) for the event's deliveries."""
    with tx() as session:
        rows = session.execute(
            select(WebhookDelivery.endpoint_id, WebhookDelivery.status, WebhookDelivery.next_attempt_at).where(
                WebhookDelivery.event_id == UUID(event_id)
            )
        ).all()
    assert len({row.endpoint_id for row in rows}) == len(rows), "two deliveries of one event to one endpoint"
    return {row.endpoint_id: (row.status, row.next_attempt_at is not None) for row in rows}


def stored_events(tx: Transactions, ids: list[str]) -> int:
    with tx() as session:
        return session.scalar(select(func.count()).where(WebhookEvent.id.in_([UUID(i) for i in ids])))


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.1)


def wait_until_settled(broker: PrivateBroker, queue: str) -> None:
    """Nothing ready and nothing unacknowledged: every message was acked or dropped."""
    wait_for(lambda: broker.queue_counts(queue) == (0, 0), f"queue {queue} is empty")


def test_one_delivery_per_subscribed_endpoint(tx, consumer, publish, settings, broker) -> None:
    organization_id, other_organization_id = uuid4(), uuid4()
    active = add_endpoint(tx, organization_id)
    filtered_in = add_endpoint(tx, organization_id, event_types=["deal.closed", "quote.approved"])
    add_endpoint(tx, organization_id, event_types=["deal.closed"])  # another type only
    paused = add_endpoint(tx, organization_id, status="PAUSED")
    add_endpoint(tx, organization_id, status="DISABLED")
    add_endpoint(tx, other_organization_id)  # another organization's
    event = envelope("quote.approved", organization_id, {"quoteId": str(uuid4())})
    publish(event)
    wait_for(lambda: stored_events(tx, [event["id"]]) == 1, "the event is stored")
    wait_until_settled(broker, settings.events_queue)
    assert deliveries_of(tx, event["id"]) == {
        active: ("PENDING", True),  # due now
        filtered_in: ("PENDING", True),
        paused: ("PENDING", False),  # held until resumed
    }
    with tx() as session:
        body = session.scalar(select(WebhookEvent.body).where(WebhookEvent.id == UUID(event["id"])))
    assert body == dumps(event).decode()  # the envelope exactly as published, to be sent and signed


def test_redelivered_events_are_stored_and_delivered_once(tx, consumer, publish, settings, broker) -> None:
    organization_id = uuid4()
    endpoint = add_endpoint(tx, organization_id)
    event = envelope("quote.created", organization_id, {"n": 1})
    for _ in range(3):
        publish(event)
    later = envelope("quote.created", organization_id, {"n": 2})
    publish(later)
    wait_for(lambda: stored_events(tx, [later["id"]]) == 1, "the later event is stored")
    wait_until_settled(broker, settings.events_queue)
    assert stored_events(tx, [event["id"]]) == 1
    assert deliveries_of(tx, event["id"]) == {endpoint: ("PENDING", True)}


def test_messages_that_are_not_envelopes_are_dropped_not_requeued(tx, consumer, publish, settings, broker) -> None:
    garbage = [b"not json", b"[]", b'{"id": 5}', b'{"id": "x", "organizationId": "y"}', b"\xff\xfe"]
    with connect(settings.amqp_url) as connection:
        producer = Producer(connection.default_channel, exchange=events_exchange(EXCHANGE))
        for body in garbage:
            producer.publish(body, routing_key="quote.approved", content_type="application/json", delivery_mode=2)
    organization_id = uuid4()
    endpoint = add_endpoint(tx, organization_id)
    event = envelope("quote.approved", organization_id, {})
    publish(event)  # behind the garbage: it is only reached when the garbage is out of the way
    wait_for(lambda: stored_events(tx, [event["id"]]) == 1, "the event behind the garbage is stored")
    wait_until_settled(broker, settings.events_queue)
    assert deliveries_of(tx, event["id"]) == {endpoint: ("PENDING", True)}


def test_the_ack_waits_for_the_commit_and_a_killed_transaction_requeues(
    tx, consumer, publish, settings, database_url, broker
) -> None:
    organization_id = uuid4()
    endpoint = add_endpoint(tx, organization_id)
    event = envelope("quote.approved", organization_id, {})
    with psycopg.connect(database_url) as blocker, psycopg.connect(database_url, autocommit=True) as admin:
        # an uncommitted row with the event's id: the consumer's insert waits on it
        blocker.execute(
            "INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body_bytes) "
            "VALUES (%s, %s, 'quote.approved', now(), 0)",
            (event["id"], str(organization_id)),
        )
        publish(event)
        blocked = (
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s AND wait_event_type = 'Lock'"
        )
        wait_for(lambda: admin.execute(blocked, (CONSUMER_APPLICATION,)).fetchone() is not None, "the consumer waits")
        # delivered, not acked (and held so while the blocker holds): a quorum queue's counts reach
        # rabbitmqctl a few seconds late, so wait for the broker to report it
        wait_for(lambda: broker.queue_counts(settings.events_queue) == (0, 1), "the broker counts it unacked")
        [pid] = admin.execute(blocked, (CONSUMER_APPLICATION,)).fetchone()
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0] is True
        blocker.rollback()
    wait_for(lambda: stored_events(tx, [event["id"]]) == 1, "the requeued event is stored")
    wait_until_settled(broker, settings.events_queue)
    assert deliveries_of(tx, event["id"]) == {endpoint: ("PENDING", True)}


def test_the_consumer_rides_out_a_broker_restart(tx, consumer, settings, broker) -> None:
    organization_id = uuid4()
    endpoint = add_endpoint(tx, organization_id)
    before = [envelope("quote.approved", organization_id, {"n": n}) for n in range(5)]
    after = [envelope("quote.approved", organization_id, {"n": n}) for n in range(5, 10)]
    publisher = EventPublisher(settings.amqp_url, EXCHANGE)
    try:
        for event in before:
            publish_one(publisher, event)
        wait_for(lambda: stored_events(tx, [e["id"] for e in before]) == 5, "the first events are stored")
        broker.restart()
        publisher.close()  # its connection died with the broker
        for event in after:
            publish_one(publisher, event)
    finally:
        publisher.close()
    wait_for(lambda: stored_events(tx, [e["id"] for e in after]) == 5, "the events after the restart are stored")
    wait_until_settled(broker, settings.events_queue)
    assert all(deliveries_of(tx, e["id"]) == {endpoint: ("PENDING", True)} for e in before + after)


PUBLISH_WHEN_BOUND = """
import sys, time, uuid
from dps_common.events.envelope import envelope
from dps_common.messaging import EventPublisher, PublishFailed
from dps_testing.broker import publish_one
publisher = EventPublisher(sys.argv[1], sys.argv[2])
event = envelope("quote.approved", uuid.UUID(sys.argv[3]), {"via": "filesystem"})
for _ in range(300):  # until the consumer has bound its queue
    try:
        publish_one(publisher, event)
        break
    except PublishFailed:
        time.sleep(0.1)
else:
    sys.exit("never routed")
print(event["id"])
"""


def test_the_consumer_works_over_the_filesystem_transport_of_make_run(tx, settings, database_url, tmp_path) -> None:
    url = f"filesystem://{tmp_path / 'broker'}"
    organization_id = uuid4()
    endpoint = add_endpoint(tx, organization_id)
    stop = threading.Event()
    with committed(database_url, CONSUMER_APPLICATION) as consumer_tx:
        consumer = EventConsumer(settings.model_copy(update={"amqp_url": url}), consumer_tx)
        thread = threading.Thread(target=consumer.run, args=(stop,), daemon=True)
        thread.start()
        try:
            published = subprocess.run(
                [sys.executable, "-c", PUBLISH_WHEN_BOUND, url, EXCHANGE, str(organization_id)],
                check=True,
                capture_output=True,
                text=True,
                timeout=60,
            )
            event_id = published.stdout.strip()
            wait_for(lambda: stored_events(tx, [event_id]) == 1, "the event is stored")
        finally:
            stop.set()
            thread.join(timeout=30)
    assert not thread.is_alive()
    assert deliveries_of(tx, event_id) == {endpoint: ("PENDING", True)}


def received_at(tx: Transactions, ids: list[str]) -> set:
    """The distinct transaction times (``now()``) of the events: one value means one transaction."""
    with tx() as session:
        return set(session.scalars(select(WebhookEvent.received_at).where(WebhookEvent.id.in_([UUID(i) for i in ids]))))


@contextmanager
def consumer_held_up(
    tx: Transactions, settings: Settings, database_url: str, publish, broker: PrivateBroker
) -> Iterator[Callable[[int], None]]:
    """A consumer stuck on its first event (an uncommitted row with the same id blocks its insert)
    while the test publishes more: when it is let go, those are already waiting in its prefetch.
    Yields ``wait_delivered(n)``: returns once ``n`` messages are with the consumer, unacked."""
    first = envelope("quote.approved", uuid4(), {})
    with psycopg.connect(database_url) as blocker, psycopg.connect(database_url, autocommit=True) as admin:
        blocker.execute(
            "INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body_bytes) "
            "VALUES (%s, %s, 'quote.approved', now(), 0)",
            (first["id"], first["organizationId"]),
        )
        publish(first)
        blocked = (
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s AND wait_event_type = 'Lock'"
        )
        wait_for(lambda: admin.execute(blocked, (CONSUMER_APPLICATION,)).fetchone() is not None, "the consumer waits")

        def wait_delivered(count: int) -> None:
            wait_for(lambda: broker.queue_counts(settings.events_queue) == (0, count + 1), "all delivered")

        yield wait_delivered
        blocker.rollback()
    wait_for(lambda: stored_events(tx, [first["id"]]) == 1, "the first event is stored")


def test_consumer_stores_what_has_arrived_in_one_transaction_once_per_event_id(
    tx, consumer, publish, settings, database_url, broker
) -> None:
    acme, globex = uuid4(), uuid4()
    acme_active, acme_paused = add_endpoint(tx, acme), add_endpoint(tx, acme, status="PAUSED")
    add_endpoint(tx, acme, status="DISABLED")
    globex_active = add_endpoint(tx, globex, event_types=["deal.closed"])
    globex_paused = add_endpoint(tx, globex, status="PAUSED")
    twice = envelope("quote.approved", acme, {"n": 1})
    events = [twice, envelope("deal.closed", globex, {}), twice, envelope("quote.approved", globex, {}), twice]
    with consumer_held_up(tx, settings, database_url, publish, broker) as wait_delivered:
        for event in events:
            publish(event)
        wait_delivered(len(events))
    ids = [event["id"] for event in events]
    wait_for(lambda: stored_events(tx, ids) == 3, "the batch is stored")
    wait_until_settled(broker, settings.events_queue)
    assert len(received_at(tx, ids)) == 1  # one transaction for the batch
    closed, approved = events[1]["id"], events[3]["id"]
    assert deliveries_of(tx, twice["id"]) == {acme_active: ("PENDING", True), acme_paused: ("PENDING", False)}
    assert deliveries_of(tx, closed) == {globex_active: ("PENDING", True), globex_paused: ("PENDING", False)}
    assert deliveries_of(tx, approved) == {globex_paused: ("PENDING", False)}


def test_consumer_rejects_only_the_bad_message_of_a_batch(tx, consumer, publish, settings, database_url, broker) -> None:
    organization_id = uuid4()
    endpoint = add_endpoint(tx, organization_id)
    good = [envelope("quote.approved", organization_id, {"n": n}) for n in range(4)]
    too_long_type = envelope("x" * 65, organization_id, {})  # an envelope, but the database refuses its type
    with consumer_held_up(tx, settings, database_url, publish, broker) as wait_delivered:
        publish(good[0])
        with connect(settings.amqp_url) as connection:
            producer = Producer(connection.default_channel, exchange=events_exchange(EXCHANGE))
            for body in (b"not an envelope", dumps(too_long_type)):
                producer.publish(body, routing_key="quote.approved", content_type="application/json", delivery_mode=2)
        for event in good[1:]:
            publish(event)
        wait_delivered(len(good) + 2)
    ids = [event["id"] for event in good]
    wait_for(lambda: stored_events(tx, ids) == len(good), "the good events are stored")
    wait_until_settled(broker, settings.events_queue)  # the bad ones dropped, not requeued
    assert stored_events(tx, [too_long_type["id"]]) == 0
    assert all(deliveries_of(tx, event_id) == {endpoint: ("PENDING", True)} for event_id in ids)


def test_an_event_keeps_its_request_id_header_and_the_consumer_logs_it(
    tx: Transactions, settings: Settings, consumer, caplog: pytest.LogCaptureFixture
) -> None:
    """The relay publishes the recording request's id as the header X-Request-Id: it is stored on the
    event and the consumer's line for the event names it."""
    organization_id = uuid4()
    add_endpoint(tx, organization_id)
    event = envelope("quote.approved", organization_id, {"id": str(uuid4())})
    caplog.set_level("INFO", logger="dps.webhooks.consumer")
    publisher = EventPublisher(settings.amqp_url, EXCHANGE)
    try:
        publisher.publish_batch([OutgoingEvent(event["id"], event["type"], dumps(event), {"X-Request-Id": "req-42"})])
    finally:
        publisher.close()
    deadline = time.monotonic() + WAIT_SECONDS
    while not deliveries_of(tx, event["id"]):
        assert time.monotonic() < deadline, "the event was never accepted"
        time.sleep(0.1)
    with tx() as session:
        stored = session.scalar(select(WebhookEvent.request_id).where(WebhookEvent.id == UUID(str(event["id"]))))
    assert stored == "req-42"
    deadline = time.monotonic() + WAIT_SECONDS
    while not any(getattr(r, "eventId", None) == str(event["id"]) for r in caplog.records):
        assert time.monotonic() < deadline, "no log line for the event"
        time.sleep(0.05)
    [line] = [r for r in caplog.records if getattr(r, "eventId", None) == str(event["id"])]
    assert (line.getMessage(), getattr(line, "requestId")) == ("event accepted", "req-42")


def test_the_metrics_count_the_deliveries_due_and_the_age_of_the_oldest(tx: Transactions, publish, consumer) -> None:
    from prometheus_client import generate_latest
    from sqlalchemy import update

    from dps_common import runtime_metrics
    from dps_common.edge import metrics as edge_metrics

    from dps_webhooks.adapters.due_metrics import deliveries_due

    organization_id = uuid4()
    add_endpoint(tx, organization_id)
    event = envelope("quote.approved", organization_id, {"id": str(uuid4())})
    publish(event)
    deadline = time.monotonic() + WAIT_SECONDS
    while not deliveries_of(tx, event["id"]):
        assert time.monotonic() < deadline, "the event was never accepted"
        time.sleep(0.1)
    with tx() as session:  # overdue by 5 minutes (no worker runs here)
        session.execute(
            update(WebhookDelivery).where(WebhookDelivery.event_id == UUID(event["id"]))
            .values(next_attempt_at=func.now() - func.make_interval(0, 0, 0, 0, 0, 0, 300))
        )
    runtime_metrics.add_scrape_collector("deliveries", deliveries_due(tx))
    text = generate_latest(edge_metrics.registry()).decode()
    values = {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines() if line.startswith("dps_webhooks_")}
    assert values["dps_webhooks_deliveries_due"] >= 1
    assert 300 <= values["dps_webhooks_oldest_due_age_seconds"] < 3600
