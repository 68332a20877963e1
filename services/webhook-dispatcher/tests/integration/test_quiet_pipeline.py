"""A steady trickle of events is batched (issue 19): the consumer lingers for more messages before it
stores a batch, and the worker lingers before it records finished attempts, so each pays one
transaction for several events. Nothing is lost to the linger: a stopping worker records what it
holds, the consumer acks only after its commit."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest
from sqlalchemy import select

from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_common.messaging import EventPublisher, OutgoingEvent, connect
from dps_common.messaging.shards import routing_key, shard_of
from dps_testing.broker import publish_one
from dps_testing.services import fresh_vhost
from dps_testing.transactions import committed
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.adapters import events_queue as queue_module
from dps_webhooks.db.models import WebhookEvent
from dps_webhooks.services.intake import accept_events
from dps_webhooks.settings import Settings
from dps_webhooks.workers import consumers as consumer_module
from dps_webhooks.workers.consumers import EventConsumer

from webhook_helpers import Store, add_endpoint, incoming, running_worker, webhook_database

EXCHANGE = "test.wh.quiet.events"
WAIT_SECONDS = 60
QUIET = {"WEBHOOK_RETRY_JITTER": "0", "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2", "WEBHOOK_POLL_INTERVAL_SECONDS": "60"}


@pytest.fixture(scope="module")
def database():
    with webhook_database() as url:
        yield url


@pytest.fixture(scope="module")
def store(make_settings, database):
    store = Store(make_settings(DATABASE_URL=database))
    yield store
    store.close()


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


@pytest.fixture
def lingering_consumer(database: str) -> Iterator[Settings]:
    """A consumer on a fresh vhost that lingers a whole second for more messages, whatever the gaps
    between them (no quiet gap: the relay's batches arrive whole, so the default ends a batch once
    nothing came for 2 ms; here messages confirmed one by one are spread out on purpose)."""
    with fresh_vhost("dps_wh_quiet") as amqp_url:
        settings = Settings(
            database_url=database,
            cursor_secret=b"quiet-test-cursor-0123456789abcdef",
            secret_key=bytes(32),
            api_url="https://127.0.0.1:9",
            internal_api_token="quiet-test-internal-token-0123456789",
            amqp_url=amqp_url,
            events_exchange=EXCHANGE,
            events_queue="test.wh.quiet",
            consumer_linger_seconds=1.0,
            consumer_quiet_seconds=0,
        )
        with connect(amqp_url) as connection:
            queue_module.events_queue(settings)(connection.default_channel).declare()
        stop = threading.Event()
        with committed(database, "dps-webhooks-quiet-consumer") as tx:
            thread = threading.Thread(target=EventConsumer(settings, tx).run, args=(stop,), daemon=True)
            thread.start()
            try:
                yield settings
            finally:
                stop.set()
                thread.join(timeout=30)
        assert not thread.is_alive(), "the consumer did not stop when asked"


def test_events_published_one_by_one_within_the_linger_are_stored_in_one_transaction(store, lingering_consumer):
    organization_id = uuid4()
    with store.tx() as session:
        add_endpoint(session, organization_id)
    publisher = EventPublisher(lingering_consumer.amqp_url, EXCHANGE)
    events = [envelope("quote.approved", organization_id, {"n": n}) for n in range(3)]
    try:
        for event in events:  # each confirmed before the next: three messages, apart in time
            publish_one(publisher, event)
            time.sleep(0.1)
    finally:
        publisher.close()
    ids = [UUID(event["id"]) for event in events]

    def received_at() -> list:
        with store.tx() as session:
            return list(session.scalars(select(WebhookEvent.received_at).where(WebhookEvent.id.in_(ids))))

    wait_for(lambda: len(received_at()) == 3, "the three events are stored")
    assert len(set(received_at())) == 1  # one transaction's now(): one batch


def handed_over(store: Store, receiver: Receiver, worker, paths: list[str]):
    """One delivery per path, stored already claimed for ``worker`` (as its consumer would)."""
    organization_id = uuid4()
    for path in paths:
        endpoint_id, secret = store.endpoint(receiver.url(path, host="localhost"), organization_id=organization_id)
        receiver.secrets.append(secret)
    with store.tx() as session:
        accepted = accept_events(
            session, [incoming(organization_id)], take_up_to=worker.take_on, lease_seconds=worker.settings.lease_seconds
        )
    assert len(accepted.claimed) == len(paths)
    return accepted.claimed


def test_attempts_that_finish_apart_within_the_linger_are_recorded_in_one_transaction(store, receiver, make_settings):
    paths = [f"/quiet-record-{n}" for n in range(3)]
    settings = make_settings(DATABASE_URL=store.settings.database_url, WEBHOOK_RECORD_LINGER_SECONDS="3", **QUIET)
    with running_worker(settings) as worker:
        time.sleep(0.5)  # past the loop's first poll: no claim records the results early
        claimed = handed_over(store, receiver, worker, paths)
        for n, delivery in enumerate(claimed):  # one at a time, each answered before the next starts
            worker.start([delivery])
            receiver.wait_for(n + 1, where=lambda request: request.path.startswith("/quiet-record-"))
            time.sleep(0.2)
        rows = [store.wait_for_status(delivery.delivery_id, "SUCCESS", timeout=30) for delivery in claimed]
    assert len({row["completed_at"] for row in rows}) == 1  # one transaction's now()


def test_a_stopping_worker_records_the_results_it_was_lingering_over(store, receiver, make_settings):
    settings = make_settings(DATABASE_URL=store.settings.database_url, WEBHOOK_RECORD_LINGER_SECONDS="5", **QUIET)
    with running_worker(settings) as worker:
        time.sleep(0.5)
        [delivery] = handed_over(store, receiver, worker, ["/quiet-stop"])
        worker.start([delivery])
        receiver.wait_for(1, "/quiet-stop")
        time.sleep(0.3)  # the result is in, waiting for the linger
    row = store.delivery_row(delivery.delivery_id)  # the worker has returned: nothing is waited for
    assert (row["status"], row["claim_token"], row["attempt_count"]) == ("SUCCESS", None, 1)


def test_a_retry_is_attempted_when_due_though_the_safety_poll_is_a_minute_away(store, receiver, make_settings):
    """No poll finds the retry: the claim after its recording reads when it falls due (2 s), and the
    loop sleeps until then. With the old fixed poll it would wait the whole 60 s."""
    organization_id = uuid4()
    endpoint_id, secret = store.endpoint(receiver.url("/quiet-retry", host="localhost"), organization_id=organization_id)
    receiver.secrets.append(secret)
    receiver.answer("/quiet-retry", 500, 200)
    settings = make_settings(DATABASE_URL=store.settings.database_url, WEBHOOK_RETRY_GAPS_SECONDS="2", **QUIET)
    with running_worker(settings):
        _, delivery_id = store.event_for(endpoint_id)
        row = store.wait_for_status(delivery_id, "SUCCESS", timeout=30)  # half the safety poll
    assert [a["response_status"] for a in store.attempts(delivery_id)] == [500, 200]
    assert row["attempt_count"] == 2


def test_a_delivery_due_later_without_a_notification_is_claimed_when_due(store, receiver, make_settings):
    """A due time written with no notification (put back, spread by a recovery) before the worker's
    claim: that claim reads it, and the loop wakes for it, not for the next safety poll."""
    organization_id = uuid4()
    endpoint_id, secret = store.endpoint(receiver.url("/quiet-later", host="localhost"), organization_id=organization_id)
    receiver.secrets.append(secret)
    _, delivery_id = store.event_for(endpoint_id)
    store.sql("UPDATE webhook_deliveries SET next_attempt_at = now() + interval '3 seconds' WHERE id = :id", id=delivery_id)
    settings = make_settings(DATABASE_URL=store.settings.database_url, **QUIET)
    with running_worker(settings):
        row = store.wait_for_status(delivery_id, "SUCCESS", timeout=30)
    assert row["attempt_count"] == 1 and len(receiver.requests_to("/quiet-later")) == 1


def test_sharded_consumers_store_every_event_once_from_their_shards_queues(store, database) -> None:
    """Two shards: the relays' routing keys carry each organization's shard, each shard's queue has
    its own consumer, and every event is stored once (a redelivered one too), none from a queue
    whose shard is not its organization's."""
    with fresh_vhost("dps_wh_shards") as amqp_url:
        settings = Settings(
            database_url=database,
            cursor_secret=b"quiet-test-cursor-0123456789abcdef",
            secret_key=bytes(32),
            api_url="https://127.0.0.1:9",
            internal_api_token="quiet-test-internal-token-0123456789",
            amqp_url=amqp_url,
            events_exchange=EXCHANGE,
            events_queue="test.wh.sharded",
            events_shards=2,
        )
        consumers = consumer_module.shard_consumers(settings, store.tx)
        assert [c.queue.name for c in consumers] == ["test.wh.sharded.shard-0", "test.wh.sharded.shard-1"]
        with connect(amqp_url) as connection:
            for consumer in consumers:
                consumer.queue(connection.default_channel).declare()
        # three organizations in each shard, so both queues have work (six random ones all fell in one
        # shard once in 32 runs)
        organizations = [*_organizations_in(0, 3), *_organizations_in(1, 3)]
        events = [envelope("quote.approved", organization, {"n": n}) for n in range(3) for organization in organizations]
        publisher = EventPublisher(amqp_url, EXCHANGE)
        try:
            batch = [
                OutgoingEvent(e["id"], e["type"], dumps(e), None, routing_key(e["type"], UUID(e["organizationId"]), 2))
                for e in [*events, events[0]]  # the first one twice
            ]
            assert publisher.publish_batch(batch).failure is None
        finally:
            publisher.close()
        stop = threading.Event()
        threads = [threading.Thread(target=c.run, args=(stop,), daemon=True) for c in consumers]
        for thread in threads:
            thread.start()
        ids = [UUID(e["id"]) for e in events]
        try:
            def stored() -> int:
                with store.tx() as session:
                    return len(list(session.scalars(select(WebhookEvent.id).where(WebhookEvent.id.in_(ids)))))

            wait_for(lambda: stored() == len(ids), "every event is stored")
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)


def _organizations_in(shard: int, count: int) -> list[UUID]:
    """``count`` new organization ids whose events route to ``shard`` of two."""
    found: list[UUID] = []
    while len(found) < count:
        if shard_of(candidate := uuid4(), 2) == shard:
            found.append(candidate)
    return found
