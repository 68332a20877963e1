"""Which queues are quorum queues (issue 28), on RabbitMQ (a fresh virtual host): the durable queues
the services declare are, with single active consumer; a process's own subscription queue cannot be
(RabbitMQ refuses an exclusive or auto-delete quorum queue), so it stays classic."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import unquote, urlsplit
from uuid import uuid4

import pytest
from kombu.entity import Queue

from dps_common.messaging import connect, events_exchange
from dps_common.messaging.queues import QUORUM, durable_queue_arguments
from dps_common.messaging.subscriber import Subscriber
from dps_testing.broker import rabbitmqctl
from dps_testing.services import fresh_vhost

EXCHANGE = "dps.events"


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_queue_types") as url:
        yield url


def queue_types(amqp_url: str) -> dict[str, str]:
    vhost = unquote(urlsplit(amqp_url).path[1:]) or "/"
    listing = rabbitmqctl("-q", "list_queues", "-p", vhost, "--no-table-headers", "name", "type").stdout
    return dict(line.split()[:2] for line in listing.splitlines() if len(line.split()) >= 2)


def test_a_services_durable_queue_is_a_quorum_queue_with_a_single_active_consumer(amqp_url: str) -> None:
    name = f"qq-{uuid4().hex[:8]}"
    queue = Queue(name, exchange=events_exchange(EXCHANGE), routing_key="#", durable=True, auto_delete=False,
                  queue_arguments=durable_queue_arguments(single_active_consumer=True, type_=QUORUM))
    with connect(amqp_url) as connection:
        queue(connection.default_channel).declare()
    assert queue_types(amqp_url)[name] == "quorum"


def test_a_subscription_queue_cannot_be_a_quorum_queue_so_it_stays_classic(amqp_url: str) -> None:
    refused = Queue(f"sub-{uuid4().hex[:8]}", durable=False, exclusive=True, auto_delete=True,
                    queue_arguments={"x-queue-type": QUORUM})
    with connect(amqp_url) as connection:
        with pytest.raises(connection.channel_errors, match="PRECONDITION_FAILED"):
            refused(connection.channel()).declare()

    subscriber = Subscriber(amqp_url, EXCHANGE, ["internal.api_key.revoked"], lambda _body: None, purpose="types-test")
    subscriber.start()
    try:
        assert subscriber.subscribed.wait(10)
        deadline = time.monotonic() + 10
        while subscriber.queue.name not in queue_types(amqp_url) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert queue_types(amqp_url)[subscriber.queue.name] == "classic"
    finally:
        subscriber.stop()
