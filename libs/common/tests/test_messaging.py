"""The events exchange and the confirming publisher, on a real RabbitMQ (a fresh virtual host) and
on the filesystem transport of ``make run`` (a second process publishes, so routing has to go
through the shared control folder, not through memory)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from uuid import uuid4

import pytest
from kombu import Connection, Queue

from dps_common.events import envelope
from dps_common.messaging import Backoff, EventPublisher, PublishFailed, connect, events_exchange, redacted
from dps_common.testing.broker import broker_stopped
from dps_common.testing.services import fresh_vhost

EXCHANGE = "test.events"


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_messaging") as url:
        yield url


def bound_queue(connection: Connection, pattern: str = "#", exchange: str = EXCHANGE) -> Queue:
    queue = Queue(f"q-{uuid4().hex[:8]}", exchange=events_exchange(exchange), routing_key=pattern, durable=True)
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
        publisher = EventPublisher(amqp_url, EXCHANGE)
        try:
            publisher.publish(event)
        finally:
            publisher.close()
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
    publisher = EventPublisher(amqp_url, "test.unrouted")
    try:
        with pytest.raises(PublishFailed, match="no queue"):
            publisher.publish(envelope("nobody.listens", uuid4(), {}))
        publisher.publish(envelope("quote.created", uuid4(), {}))  # the connection is still usable
    finally:
        publisher.close()


def test_publish_fails_while_the_broker_is_down_and_works_again_after(amqp_url: str) -> None:
    with connect(amqp_url) as connection:
        queue = bound_queue(connection, exchange="test.restart")
    publisher = EventPublisher(amqp_url, "test.restart")
    try:
        publisher.publish(envelope("quote.created", uuid4(), {"n": 1}))
        with broker_stopped():
            with pytest.raises(PublishFailed):
                publisher.publish(envelope("quote.created", uuid4(), {"n": 2}))
        publisher.publish(envelope("quote.created", uuid4(), {"n": 3}))  # reconnects by itself
    finally:
        publisher.close()
    with connect(amqp_url) as connection:
        assert [json.loads(m.body)["data"]["n"] for m in received(connection, queue)] == [1, 3]


PUBLISH_FROM_ANOTHER_PROCESS = """
import sys, uuid
from dps_common.events import envelope
from dps_common.messaging import EventPublisher
publisher = EventPublisher(sys.argv[1], sys.argv[2])
publisher.publish(envelope("quote.approved", uuid.UUID(sys.argv[3]), {"from": "child"}))
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
        publisher = EventPublisher(url, "test.fs.unrouted")
        try:
            with pytest.raises(PublishFailed, match="no queue"):
                publisher.publish(envelope("deal.closed", uuid4(), {}))
            publisher.publish(envelope("quote.created", uuid4(), {}))
        finally:
            publisher.close()
        assert [json.loads(m.body)["type"] for m in received(connection, quotes)] == ["quote.created"]


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
