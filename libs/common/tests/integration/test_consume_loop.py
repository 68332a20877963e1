"""The one consume loop (``dps_common.messaging.consumer``) every consumer runs, on a real RabbitMQ (a
fresh virtual host) and on the filesystem transport of ``make run``: the batch is acknowledged only
after its handler returned, a message the handler rejects stays rejected, ``TryLater`` puts the batch
back and it is handed over again, what is waiting comes in batches of at most ``batch_size``, a
``no_ack`` consumer acknowledges nothing, ``on_consuming`` runs once bound and before any message,
an unreachable broker is retried until ``stop``, and a virtual transport's auto-delete queue goes
when the loop stops."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from uuid import uuid4

import pytest
from kombu import Queue
from kombu.message import Message

from dps_common.messaging import EventPublisher, OutgoingEvent, connect, events_exchange
from dps_common.messaging.consumer import ConsumeLoop, TryLater
from dps_testing.broker import queue_counts
from dps_testing.services import fresh_vhost

EXCHANGE = "test.consume-loop"
WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_consume_loop") as url:
        yield url


def new_queue(**options: object) -> Queue:
    defaults: dict[str, object] = {"durable": True, "auto_delete": False}
    return Queue(f"q-{uuid4().hex[:8]}", exchange=events_exchange(EXCHANGE), routing_key="#", **{**defaults, **options})


def declared(url: str, queue: Queue) -> Queue:
    with connect(url) as connection:
        queue(connection.default_channel).declare()
    return queue


def publish(url: str, *bodies: str) -> None:
    publisher = EventPublisher(url, EXCHANGE)
    try:
        published = publisher.publish_batch([OutgoingEvent(uuid4(), "test.message", body) for body in bodies])
        assert published.failure is None
    finally:
        publisher.close()


def ready(url: str, queue: Queue) -> int:
    """Messages waiting in the queue (a stopped consumer's unacknowledged ones are back among them)."""
    with connect(url) as connection:
        return queue(connection.default_channel).queue_declare(passive=True).message_count


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


class Running:
    """A loop on a thread of its own, stopped (and joined) when the block ends."""

    def __init__(self, loop: ConsumeLoop):
        self.loop = loop
        self.stop = threading.Event()
        self.thread = threading.Thread(target=loop.run, args=(self.stop,), daemon=True)

    def __enter__(self) -> Running:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the loop did not return after stop"


def bodies(batch: list[Message]) -> list[str]:
    return [message.body.decode() if isinstance(message.body, bytes) else str(message.body) for message in batch]


def test_a_batch_is_acknowledged_once_its_handler_returned(amqp_url: str) -> None:
    queue = declared(amqp_url, new_queue())
    publish(amqp_url, "one")
    entered, release = threading.Event(), threading.Event()

    def handle(batch: list[Message]) -> None:
        entered.set()
        assert release.wait(WAIT_SECONDS)

    with Running(ConsumeLoop(amqp_url, lambda channel: [queue], handle, name="ack-after")):
        assert entered.wait(WAIT_SECONDS)
        assert queue_counts(amqp_url, queue.name) == (0, 1)  # with the handler, not acknowledged
        release.set()
        wait_for(lambda: queue_counts(amqp_url, queue.name) == (0, 0), "the message is acknowledged")


def test_what_the_handler_rejects_stays_rejected_and_the_rest_is_acknowledged(amqp_url: str) -> None:
    queue = declared(amqp_url, new_queue())
    publish(amqp_url, "good", "bad", "good too")
    seen: list[str] = []

    def handle(batch: list[Message]) -> None:
        for message in batch:
            seen.append(bodies([message])[0])
            if bodies([message]) == ["bad"]:
                message.reject(requeue=False)

    with Running(ConsumeLoop(amqp_url, lambda channel: [queue], handle, name="reject", batch_size=8, linger_seconds=0.2)):
        wait_for(lambda: len(seen) == 3, "every message is handled")
    assert sorted(seen) == ["bad", "good", "good too"]
    assert ready(amqp_url, queue) == 0


def test_try_later_puts_the_batch_back_and_hands_it_over_again(amqp_url: str) -> None:
    queue = declared(amqp_url, new_queue())
    publish(amqp_url, "a", "b")
    batches: list[list[str]] = []

    def handle(batch: list[Message]) -> None:
        batches.append(bodies(batch))
        if len(batches) == 1:
            raise TryLater("the database is away")

    loop = ConsumeLoop(amqp_url, lambda channel: [queue], handle, name="later", batch_size=8, linger_seconds=0.2)
    with Running(loop):
        wait_for(lambda: sum(len(batch) for batch in batches[1:]) == 2, "the batch is handled again")
    assert sorted(batches[0]) == ["a", "b"] and sorted(m for batch in batches[1:] for m in batch) == ["a", "b"]
    assert ready(amqp_url, queue) == 0


def test_what_is_waiting_comes_in_batches_of_at_most_batch_size(amqp_url: str) -> None:
    queue = declared(amqp_url, new_queue())
    publish(amqp_url, *[str(n) for n in range(10)])
    batches: list[list[str]] = []
    loop = ConsumeLoop(amqp_url, lambda channel: [queue], lambda b: batches.append(bodies(b)), name="batches",
                       batch_size=4, linger_seconds=0.2, prefetch=8)
    with Running(loop):
        wait_for(lambda: sum(map(len, batches)) == 10, "every message is handled")
    assert max(map(len, batches)) == 4 and len(batches) < 10  # several at once, never more than asked
    assert [m for batch in batches for m in batch] == [str(n) for n in range(10)]  # in order
    assert ready(amqp_url, queue) == 0


def test_a_burst_published_together_ends_its_batch_once_the_queue_is_quiet(amqp_url: str) -> None:
    queue = declared(amqp_url, new_queue())
    batches: list[list[str]] = []
    # a linger longer than the test waits: only the quiet gap can end a batch in time
    loop = ConsumeLoop(amqp_url, lambda channel: [queue], lambda b: batches.append(bodies(b)), name="quiet",
                       batch_size=8, linger_seconds=WAIT_SECONDS * 4, quiet_seconds=0.5)
    with Running(loop):
        wait_for(loop.consuming.is_set, "the loop consumes")
        publish(amqp_url, "a", "b", "c")  # one batch of the relay's: sent at once, confirmed once
        wait_for(lambda: sum(map(len, batches)) == 3, "the burst is handled before the linger's end")
        publish(amqp_url, "d")
        wait_for(lambda: sum(map(len, batches)) == 4, "the next message is handled")
    assert batches == [["a", "b", "c"], ["d"]]  # the burst whole, in one batch
    assert ready(amqp_url, queue) == 0


def test_a_no_ack_consumer_runs_on_consuming_first_and_acknowledges_nothing(amqp_url: str) -> None:
    queue = new_queue(durable=False, exclusive=True, auto_delete=True)
    order: list[str] = []
    loop = ConsumeLoop(amqp_url, lambda channel: [queue], lambda b: order.extend(bodies(b)), name="broadcast",
                       no_ack=True, on_consuming=lambda: order.append("bound"))
    with Running(loop):
        wait_for(loop.consuming.is_set, "the loop consumes")
        publish(amqp_url, "news")  # routed: the queue was bound before on_consuming ran
        wait_for(lambda: order == ["bound", "news"], "the message is handled")
    assert not loop.consuming.is_set()


def test_an_unreachable_broker_is_retried_until_stop() -> None:
    asked: list[object] = []

    def queues(channel: object) -> list[Queue]:
        asked.append(channel)
        return []

    loop = ConsumeLoop("amqp://guest:guest@127.0.0.1:1//", queues, lambda batch: None, name="away")
    with Running(loop):
        time.sleep(1.0)  # a few attempts (no timing is asserted: only that it never consumed)
        assert not loop.consuming.is_set()
    assert asked == []  # never connected, so never asked for its queues


def test_a_virtual_transports_auto_delete_queue_goes_when_the_loop_stops(tmp_path) -> None:
    url = f"filesystem://{tmp_path / 'broker'}"
    exchange = events_exchange(EXCHANGE)
    kept, passing = new_queue(), new_queue(durable=False, auto_delete=True)
    loop = ConsumeLoop(url, lambda channel: [kept, passing], lambda b: None, name="filesystem")
    with Running(loop):
        wait_for(loop.consuming.is_set, "the loop consumes")
    with connect(url) as connection:
        bound = {entry.queue for entry in connection.default_channel.get_table(exchange.name)}
    assert kept.name in bound and passing.name not in bound
