"""The private test broker: a RabbitMQ node of the test's own that can be stopped and restarted
while the machine's shared broker keeps serving everyone else."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest
from amqp.exceptions import NotFound
from kombu import Queue
from kombu.connection import Connection
from kombu.messaging import Producer

from dps_common.messaging import connect
from dps_testing.broker import PrivateBroker, private_broker, queue_counts
from dps_testing.services import amqp_server_url


@pytest.fixture(scope="module")
def broker() -> Iterator[PrivateBroker]:
    with private_broker() as broker:
        yield broker


def publish_persistent(url: str, queue_name: str, body: str) -> None:
    queue = Queue(queue_name, durable=True, auto_delete=False)
    with connect(url) as connection:
        producer = Producer(connection.default_channel)
        producer.publish(body, routing_key=queue_name, declare=[queue], delivery_mode=2, retry=False)


def accepts_connections(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def answers(url: str) -> bool:
    """A full AMQP handshake (and a channel) works."""
    try:
        with Connection(url, connect_timeout=3) as connection:
            connection.ensure_connection(max_retries=1)
            connection.default_channel.basic_qos(0, 1, False)
        return True
    except Exception:  # kombu raises the transport's own errors
        return False


def test_a_private_broker_stops_and_starts_while_the_shared_broker_keeps_answering(broker: PrivateBroker) -> None:
    shared_url = amqp_server_url()
    assert broker.url != shared_url and broker.port != 5672
    publish_persistent(broker.url, "private-durable", "kept")
    with Connection(shared_url, connect_timeout=3) as shared:
        shared.ensure_connection(max_retries=1)
        with broker.stopped():
            assert not answers(broker.url)
            assert answers(shared_url)  # a new connection to the shared broker
            shared.default_channel.basic_qos(0, 1, False)  # and one opened before the stop
        assert answers(broker.url)
    assert broker.queue_counts("private-durable") == (1, 0)  # durable and persistent: it survived
    assert queue_counts(broker.url, "private-durable", broker=broker) == (1, 0)
    with connect(shared_url) as connection, pytest.raises(NotFound):  # the queue is the private node's alone
        connection.default_channel.queue_declare("private-durable", passive=True)


def test_the_broker_is_started_again_when_the_stopped_block_fails(broker: PrivateBroker) -> None:
    with pytest.raises(RuntimeError, match="the test failed"), broker.stopped():
        assert not accepts_connections(broker.port)
        raise RuntimeError("the test failed")
    assert answers(broker.url)


def test_restart_drops_connections_and_serves_again(broker: PrivateBroker) -> None:
    with connect(broker.url) as before:
        before.ensure_connection(max_retries=1)
        broker.restart()
        with pytest.raises(Exception):  # the broker closed it: any transport error
            before.default_channel.basic_qos(0, 1, False)
    assert answers(broker.url)


def test_close_stops_the_node_and_removes_its_files() -> None:
    with private_broker() as broker:
        folder, pid = broker.folder, broker.pid
        assert pid is not None and folder.is_dir() and answers(broker.url)
    with pytest.raises(ProcessLookupError):  # nothing left of the node's process group
        os.killpg(pid, 0)
    assert not folder.exists()
    assert not accepts_connections(broker.port)
