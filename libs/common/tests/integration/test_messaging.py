"""The events exchange and the confirming publisher, on a real RabbitMQ (a fresh virtual host) and
on the filesystem transport of ``make run`` (a second process publishes, so routing has to go
through the shared control folder, not through memory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from uuid import UUID, uuid4

import pytest
from kombu import Connection, Queue

from dps_common.events.envelope import envelope
from dps_common.messaging import (
    Backoff,
    EventPublisher,
    OutgoingEvent,
    PublishFailed,
    connect,
    events_exchange,
    redacted,
)
from dps_common.messaging import filesystem as filesystem_transport
from dps_common.messaging.confirms import BatchConfirms
from dps_testing.broker import PrivateBroker, private_broker, publish_one
from dps_testing.services import fresh_vhost

EXCHANGE = "test.events"


@pytest.fixture(scope="module")
def broker() -> Iterator[PrivateBroker]:
    """A RabbitMQ node of this module's own, for the tests that stop the broker."""
    with private_broker() as broker:
        yield broker


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_messaging") as url:
        yield url


def bound_queue(connection: Connection, pattern: str = "#", exchange: str = EXCHANGE, **arguments) -> Queue:
    queue = Queue(
        f"q-{uuid4().hex[:8]}",
        exchange=events_exchange(exchange),
        routing_key=pattern,
        durable=True,
        queue_arguments=arguments,
    )
    queue(connection.default_channel).declare()
    return queue


def received(connection: Connection, queue: Queue) -> list:
    messages = []
    while (message := queue(connection.default_channel).get(no_ack=True)) is not None:
        messages.append(message)
    return messages


def test_publish_is_the_envelope_as_persistent_json_routed_by_type(amqp_url: str) -> None:
    event = envelope("quote.approved", uuid4(), {"quoteId": str(uuid4()), "total": "12.50"})
    with connect(amqp_url) as connection:
        quotes, everything, other = bound_queue(connection, "quote.*"), bound_queue(connection), bound_queue(connection, "deal.*")
        with closing(EventPublisher(amqp_url, EXCHANGE)) as publisher:
            publish_one(publisher, event)
        [message] = received(connection, quotes)
        assert [m.body for m in received(connection, everything)] == [message.body]
        assert received(connection, other) == []
    assert json.loads(message.body) == event
    assert message.content_type == "application/json"
    assert message.properties["message_id"] == event["id"]
    assert message.properties["delivery_mode"] == 2
    assert message.delivery_info["routing_key"] == "quote.approved"
    assert message.delivery_info["exchange"] == EXCHANGE


def test_an_event_no_queue_is_bound_for_is_a_failure_not_a_silent_drop(amqp_url: str) -> None:
    with connect(amqp_url) as connection:
        bound_queue(connection, "quote.*", exchange="test.unrouted")
    with closing(EventPublisher(amqp_url, "test.unrouted")) as publisher:
        with pytest.raises(PublishFailed, match="no queue"):
            publish_one(publisher, envelope("nobody.listens", uuid4(), {}))
        publish_one(publisher, envelope("quote.created", uuid4(), {}))  # the connection is still usable


def outgoing(event_type: str, n: int) -> OutgoingEvent:
    """An event as the relay sends it: the stored text of its envelope (spaced as PostgreSQL spaces it)."""
    event = envelope(event_type, uuid4(), {"n": n})
    return OutgoingEvent(UUID(event["id"]), event_type, json.dumps(event))


def test_a_batch_is_sent_as_given_and_every_event_reported_confirmed(amqp_url: str) -> None:
    events = [outgoing("quote.approved", n) for n in range(3)]
    with connect(amqp_url) as connection:
        queue = bound_queue(connection, exchange="test.batch")
        with closing(EventPublisher(amqp_url, "test.batch")) as publisher:
            first = publisher.publish_batch(events)
            second = publisher.publish_batch(events[:1])  # the channel's delivery tags go on counting
        messages = received(connection, queue)
    assert (first.confirmed, first.failure) == ([event.id for event in events], None)
    assert (second.confirmed, second.failure) == ([events[0].id], None)
    sent = events + events[:1]
    assert [message.body for message in messages] == [event.body for event in sent]
    assert [message.properties["message_id"] for message in messages] == [str(event.id) for event in sent]
    assert all(message.properties["delivery_mode"] == 2 for message in messages)
    assert all(message.content_type == "application/json" for message in messages)


def test_in_a_batch_only_the_unroutable_event_fails(amqp_url: str) -> None:
    events = [outgoing("quote.created", 1), outgoing("nobody.listens", 2), outgoing("quote.created", 3)]
    with connect(amqp_url) as connection:
        queue = bound_queue(connection, "quote.*", exchange="test.batch.unrouted")
        with closing(EventPublisher(amqp_url, "test.batch.unrouted")) as publisher:
            published = publisher.publish_batch(events)
            after = publisher.publish_batch(events[:1])  # the connection is still usable
        bodies = [message.body for message in received(connection, queue)]
    assert published.confirmed == [events[0].id, events[2].id]
    assert "no queue is bound for event type 'nobody.listens'" in str(published.failure)
    assert (after.confirmed, after.failure) == ([events[0].id], None)
    assert bodies == [events[0].body, events[2].body, events[0].body]


def test_in_a_batch_the_events_the_broker_refuses_are_not_reported_confirmed(amqp_url: str) -> None:
    """A queue that rejects publishes beyond two messages: the broker acks two and nacks the rest."""
    events = [outgoing("quote.created", n) for n in range(4)]
    with connect(amqp_url) as connection:
        bound_queue(connection, exchange="test.batch.full", **{"x-max-length": 2, "x-overflow": "reject-publish"})
    with closing(EventPublisher(amqp_url, "test.batch.full")) as publisher:
        published = publisher.publish_batch(events)
    assert published.confirmed == [events[0].id, events[1].id]
    assert "refused 2 of 4" in str(published.failure)


def test_a_batch_while_the_broker_is_down_confirms_nothing_and_the_next_one_reconnects(broker: PrivateBroker) -> None:
    amqp_url = broker.url
    events = [outgoing("quote.created", n) for n in range(3)]
    with connect(amqp_url) as connection:
        queue = bound_queue(connection, exchange="test.batch.restart")
    with closing(EventPublisher(amqp_url, "test.batch.restart")) as publisher:
        publisher.connect()
        with broker.stopped():
            down = publisher.publish_batch(events)
        up = publisher.publish_batch(events)
    assert down.confirmed == [] and isinstance(down.failure, PublishFailed)
    assert (up.confirmed, up.failure) == ([event.id for event in events], None)
    with connect(amqp_url) as connection:
        assert [message.body for message in received(connection, queue)] == [event.body for event in events]


def test_confirms_settle_one_tag_or_with_multiple_every_open_tag_up_to_it() -> None:
    confirms = BatchConfirms(first_tag=5, count=4)  # tags 5, 6, 7, 8
    confirms.ack(6, multiple=False)
    confirms.ack(4, multiple=True)  # an earlier batch's: nothing here
    confirms.ack(9, multiple=False)  # not this batch's
    assert (confirms.acked(), confirms.unsettled) == ([1], 3)
    confirms.nack(7, multiple=True)  # 5 and 7; 6 stays acked
    assert (confirms.acked(), confirms.nacked(), confirms.unsettled) == ([1], 2, 1)
    confirms.ack(12, multiple=True)  # reaches past the batch: settles its last open tag only
    assert (confirms.acked(), confirms.nacked(), confirms.unsettled) == ([1, 3], 2, 0)


def test_publish_fails_while_the_broker_is_down_and_works_again_after(broker: PrivateBroker) -> None:
    amqp_url = broker.url
    with connect(amqp_url) as connection:
        queue = bound_queue(connection, exchange="test.restart")
    with closing(EventPublisher(amqp_url, "test.restart")) as publisher:
        publish_one(publisher, envelope("quote.created", uuid4(), {"n": 1}))
        with broker.stopped():
            with pytest.raises(PublishFailed):
                publish_one(publisher, envelope("quote.created", uuid4(), {"n": 2}))
        publish_one(publisher, envelope("quote.created", uuid4(), {"n": 3}))  # reconnects by itself
    with connect(amqp_url) as connection:
        assert [json.loads(m.body)["data"]["n"] for m in received(connection, queue)] == [1, 3]


PUBLISH_FROM_ANOTHER_PROCESS = """
import sys, uuid
from dps_common.events.envelope import envelope
from dps_common.messaging import EventPublisher
from dps_testing.broker import publish_one
publisher = EventPublisher(sys.argv[1], sys.argv[2])
publish_one(publisher, envelope("quote.approved", uuid.UUID(sys.argv[3]), {"from": "child"}))
publisher.close()
"""


def test_filesystem_transport_routes_a_topic_exchange_between_processes(tmp_path) -> None:
    url = f"filesystem://{tmp_path / 'broker'}"
    organization_id = uuid4()
    with connect(url) as connection:
        quotes = bound_queue(connection, "quote.*")
        subprocess.run(
            [sys.executable, "-c", PUBLISH_FROM_ANOTHER_PROCESS, url, EXCHANGE, str(organization_id)],
            check=True,
            timeout=60,
        )
        [message] = received(connection, quotes)
    event = json.loads(message.body)
    assert (event["type"], event["organizationId"], event["data"]) == ("quote.approved", str(organization_id), {"from": "child"})
    assert (tmp_path / "broker" / "control" / f"{EXCHANGE}.exchange").exists()


def test_filesystem_transport_refuses_an_event_no_queue_is_bound_for(tmp_path) -> None:
    url = f"filesystem://{tmp_path / 'broker'}"
    with connect(url) as connection:
        quotes = bound_queue(connection, "quote.*", exchange="test.fs.unrouted")
        with closing(EventPublisher(url, "test.fs.unrouted")) as publisher:
            with pytest.raises(PublishFailed, match="no queue"):
                publish_one(publisher, envelope("deal.closed", uuid4(), {}))
            publish_one(publisher, envelope("quote.created", uuid4(), {}))
        assert [json.loads(m.body)["type"] for m in received(connection, quotes)] == ["quote.created"]


def test_filesystem_transport_writes_a_batch_but_its_unroutable_events(tmp_path) -> None:
    url = f"filesystem://{tmp_path / 'broker'}"
    events = [outgoing("quote.created", 1), outgoing("deal.closed", 2), outgoing("quote.created", 3)]
    with connect(url) as connection:
        quotes = bound_queue(connection, "quote.*", exchange="test.fs.batch")
        with closing(EventPublisher(url, "test.fs.batch")) as publisher:
            published = publisher.publish_batch(events)
        messages = received(connection, quotes)
    assert published.confirmed == [events[0].id, events[2].id]
    assert "no queue is bound for event type 'deal.closed'" in str(published.failure)
    # the transport's files come back in no fixed order
    assert sorted(message.body.decode() for message in messages) == sorted([events[0].body, events[2].body])
    assert all(message.properties["message_id"] == json.loads(message.body)["id"] for message in messages)


def test_filesystem_transport_consumers_never_see_a_message_before_it_is_complete(tmp_path, monkeypatch) -> None:
    """kombu's own writer creates the file consumers read and then fills it: a consumer polling in
    between takes an empty file and the message is lost. Ours writes under a name consumers skip and
    renames it into place."""
    opened_for_writing = []

    def spying_open(path, mode="r", *args, **kwargs):
        if "w" in mode:
            opened_for_writing.append(os.path.basename(path))
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(filesystem_transport, "open", spying_open, raising=False)
    url = f"filesystem://{tmp_path / 'broker'}"
    data = tmp_path / "broker" / "data"
    with connect(url) as connection:
        quotes = bound_queue(connection, "quote.*", exchange="test.fs.atomic")
        in_progress = data / f"1_{uuid4()}.{quotes.name}.msg{filesystem_transport.PARTIAL_SUFFIX}"
        in_progress.write_bytes(b"")  # another publisher, mid-write
        with closing(EventPublisher(url, "test.fs.atomic")) as publisher:
            publish_one(publisher, envelope("quote.created", uuid4(), {}))
        [message] = received(connection, quotes)
    assert json.loads(message.body)["type"] == "quote.created"
    assert opened_for_writing and not any(name.endswith(".msg") for name in opened_for_writing)
    assert [path.name for path in data.iterdir()] == [in_progress.name]  # skipped by the consumer, still there


def test_backoff_doubles_up_to_its_maximum_and_stops_early_when_asked() -> None:
    backoff = Backoff(initial=0.001, maximum=0.004)
    delays = []
    for _ in range(4):
        delays.append(backoff.next_delay)
        backoff.wait(threading.Event())
    assert delays == [0.001, 0.002, 0.004, 0.004]
    backoff.reset()
    assert backoff.next_delay == 0.001
    stop = threading.Event()
    stop.set()
    assert Backoff(initial=60).wait(stop) is True


def test_redacted_hides_the_password_only() -> None:
    assert redacted("amqp://guest:secret@broker:5672/vh") == "amqp://guest:***@broker:5672/vh"
    assert redacted("filesystem:///tmp/x") == "filesystem:///tmp/x"
