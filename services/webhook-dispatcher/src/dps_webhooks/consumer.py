"""The event consumer: the api's events, from the broker into events and deliveries.

It binds a durable queue to the events exchange for every type (``#``). After a message it takes
whatever else arrives within a short linger (``WEBHOOK_CONSUMER_LINGER_SECONDS``, 20 ms: the rest of
the relay's batch, at a steady rate a few more events; in a burst the batch fills at once) and
stores the batch's events and deliveries in one transaction (``accept_events``, which
deduplicates on the event id), acknowledging only after that transaction committed: a crash in
between redelivers the messages and the event ids make the second pass a no-op. One commit (one
fsync) per batch instead of per event is what lets the consumer keep up with bursts. The queue has a
single active consumer (RabbitMQ's ``x-single-active-consumer``): with several workers, one consumes
and the rest stand by, so batches stay whole.

A message that is not an event envelope is rejected without requeue (it would fail the same way
forever) before the batch is stored. When the database refuses a batch (a value it cannot hold),
the batch is retried one event at a time so only the bad message is rejected. When the database
fails, the messages go back to the queue, the connection is dropped (returning the other prefetched
messages too) and the consumer backs off before trying again; a lost broker is reconnected forever
with the same backoff.

In a worker process, the deliveries its own worker can start soon are stored already claimed and
handed to it (``hand_over``, given at composition by ``cli``): they skip the claim statement and the
wake-up of every worker.
"""

from __future__ import annotations

import logging
import threading
import time

from kombu.connection import Connection
from kombu.entity import Queue
from kombu.message import Message
from kombu.messaging import Consumer
from sqlalchemy.exc import DataError, IntegrityError

from dps_common.db import Transactions
from dps_common.events.headers import request_id_of
from dps_common.messaging import Backoff, broker_errors, connect, events_exchange, redacted
from dps_common.messaging.shards import SHARD_WORD, shard_binding

from dps_webhooks import metrics
from dps_webhooks.delivery.hand_over import HandOver, NoHandOver
from dps_webhooks.services.intake import IncomingEvent, accept_events
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.consumer")

BATCH_SIZE = 32  # the most events one transaction stores: about two rounds of the worker's threads
PREFETCH = 2 * BATCH_SIZE  # messages in flight to this consumer: the next batch arrives while one is stored
DRAIN_SECONDS = 0.5  # how often the loop looks at ``stop`` and the heartbeat while idle
STANDBY_DELAY_SECONDS = 5.0  # how much later a worker joins a shard it was not given


def events_queue(settings: Settings, shard: int | None = None) -> Queue:
    """The dispatcher's durable queue of every event type (``shard``: of one shard's organizations,
    ``<queue>.shard-<n>``, with ``EVENTS_SHARDS`` above 1). Every worker consumes it, one at a time
    (``x-single-active-consumer``): the others stand by and take over when it goes. Consuming is
    cheap in batches and splitting one stream between workers would only halve the batches; shards
    split it by organization instead, each with its own active consumer and each organization's
    events in one of them, in order. The delivery work itself is shared through the database."""
    return Queue(
        settings.events_queue if shard is None else f"{settings.events_queue}.{SHARD_WORD}{shard}",
        exchange=events_exchange(settings.events_exchange),
        routing_key="#" if shard is None else shard_binding(shard),
        durable=True,
        auto_delete=False,
        queue_arguments={"x-single-active-consumer": True},
    )


def shard_consumers(settings: Settings, tx: Transactions, *, hand_over: HandOver | None = None) -> list["EventConsumer"]:
    """One consumer per shard (one in all without shards), each to run on a thread of its own. A
    worker joins the shards it was not given (``WEBHOOK_CONSUMER_SHARDS``) only after
    ``STANDBY_DELAY_SECONDS``, so the workers given a shard become its active consumers and the
    others its stand-bys: consumers spread over workers, and any worker takes over a shard whose
    active consumer goes."""
    if settings.events_shards <= 1:
        return [EventConsumer(settings, tx, hand_over=hand_over)]
    given = set(settings.consumer_shards or range(settings.events_shards))
    return [
        EventConsumer(settings, tx, hand_over=hand_over, shard=shard,
                      standby_seconds=0.0 if shard in given else STANDBY_DELAY_SECONDS)
        for shard in range(settings.events_shards)
    ]


class _Unavailable(Exception):
    """The database (or intake) failed on a valid message: back off, then consume again."""


class EventConsumer:
    def __init__(
        self,
        settings: Settings,
        tx: Transactions,
        *,
        hand_over: HandOver | None = None,
        shard: int | None = None,
        standby_seconds: float = 0.0,
    ):
        self._settings = settings
        self._tx = tx
        self._hand_over: HandOver = hand_over if hand_over is not None else NoHandOver()
        self._queue = events_queue(settings, shard)
        self._standby_seconds = standby_seconds  # before each (re)subscription: see shard_consumers
        self._backoff = Backoff()
        self._acks_many = False  # AMQP acknowledges a batch in one frame; virtual transports one by one

    def run(self, stop: threading.Event) -> None:
        """Consume until ``stop`` is set; returns within about a second of it."""
        while not stop.is_set():
            if stop.wait(self._standby_seconds):
                return
            connection = connect(self._settings.amqp_url)
            try:
                connection.ensure_connection(max_retries=1)
                self._consume(connection, stop)
            except _Unavailable:
                self._backoff.wait(stop)
            except broker_errors(connection) as exc:
                log.warning("broker unavailable", extra={"broker": redacted(self._settings.amqp_url), "error": repr(exc)})
                self._backoff.wait(stop)
            except Exception:  # never let the worker lose its consumer thread to a surprise
                log.exception("consumer failed; restarting")
                self._backoff.wait(stop)
            finally:
                _release(connection)

    def _consume(self, connection: Connection, stop: threading.Event) -> None:
        channel = connection.channel()
        self._acks_many = connection.transport.driver_type == "amqp"
        channel.basic_qos(0, PREFETCH, False)  # positional: AMQP and kombu's virtual transports name them apart
        received: list[Message] = []
        consumer = Consumer(channel, queues=[self._queue], on_message=received.append, auto_declare=True)
        consumer.consume()
        log.info("consuming events", extra={"queue": self._queue.name, "exchange": self._queue.exchange.name})
        linger = self._settings.consumer_linger_seconds
        while not stop.is_set():
            if received or _drain(connection, DRAIN_SECONDS):
                until = time.monotonic() + linger
                while len(received) < BATCH_SIZE and _drain(connection, max(0.0, until - time.monotonic())):
                    pass  # what arrives within the linger, then what has arrived
                batch, received[:] = received[:BATCH_SIZE], received[BATCH_SIZE:]
                self._accept(batch)
            connection.heartbeat_check()

    def _accept(self, messages: list[Message]) -> None:
        parsed = [(message, event) for message in messages if (event := _parse(message)) is not None]
        if not parsed:
            return
        try:
            self._store(parsed)
        except (DataError, IntegrityError):  # some event in the batch can never be stored
            if len(parsed) == 1:
                _refused(*parsed[0])
                return
            log.warning("batch refused by the database; accepting its events one by one", extra={"events": len(parsed)})
            for pair in parsed:
                self._accept_one(pair)

    def _accept_one(self, pair: tuple[Message, IncomingEvent]) -> None:
        try:
            self._store([pair])
        except (DataError, IntegrityError):
            _refused(*pair)

    def _store(self, parsed: list[tuple[Message, IncomingEvent]]) -> None:
        """One transaction for the batch, then the acks; requeue all of it when the database fails."""
        events = [event for _, event in parsed]
        self._hand_over.wait_for_room(len(events))
        taken = 0

        def take_up_to(count: int) -> int:
            nonlocal taken
            taken = self._hand_over.take_on(count)
            return taken

        try:
            with self._tx() as session:
                accepted = accept_events(
                    session, events, take_up_to=take_up_to, lease_seconds=self._settings.lease_seconds
                )
        except Exception as exc:
            if taken:
                self._hand_over.give_back(taken)  # stored nothing
            if isinstance(exc, DataError | IntegrityError):
                raise
            # the database is away (or intake broke): keep the messages
            log.exception("events not accepted; requeued", extra={"events": len(events)})
            for message, _ in parsed:
                message.requeue()
            raise _Unavailable from exc
        metrics.EVENTS_ACCEPTED.inc(len(events))  # a redelivered one too (it creates nothing)
        metrics.DELIVERIES_CREATED.inc(accepted.deliveries)
        metrics.DELIVERIES_HANDED_OVER.inc(len(accepted.claimed))
        self._hand_over.start(accepted.claimed)
        self._acknowledge([message for message, _ in parsed])
        self._backoff.reset()
        log.info("events accepted", extra={"events": len(events), "deliveries": accepted.deliveries})
        for event in events:  # one line per event: found by its id and by the request that caused it
            log.info("event accepted", extra={"eventId": str(event.id), "eventType": event.type, "requestId": event.request_id})

    def _acknowledge(self, messages: list[Message]) -> None:
        """After the commit. Every earlier message of this channel is settled by now (acked, rejected
        or in this list), so one ``multiple`` ack of the last settles exactly this batch."""
        if self._acks_many:
            messages[-1].ack(multiple=True)
            return
        for message in messages:
            message.ack()  # kombu's virtual transports ignore ``multiple``


def _drain(connection: Connection, timeout: float) -> bool:
    """Handle what the broker sent within ``timeout``; False when nothing came."""
    try:
        connection.drain_events(timeout=timeout)
    except TimeoutError:
        return False
    return True


def _parse(message: Message) -> IncomingEvent | None:
    """The message's event, or None after rejecting a message that is not an envelope."""
    try:
        return IncomingEvent.from_envelope(_text(message.body), request_id_of(message.headers))
    except (ValueError, TypeError, AttributeError):  # not JSON, not an object, wrong field types
        log.error("message rejected: not an event envelope", extra={"messageId": message.properties.get("message_id")})
        metrics.REJECTED_NOT_AN_ENVELOPE.inc()
        message.reject(requeue=False)
        return None


def _refused(message: Message, event: IncomingEvent) -> None:
    log.exception("event rejected: the database refused it", extra={"eventId": str(event.id)})
    metrics.REJECTED_BY_THE_DATABASE.inc()
    message.reject(requeue=False)  # retrying would loop


def _text(body: object) -> str:
    return body.decode("utf-8") if isinstance(body, bytes | bytearray) else str(body)


def _release(connection: Connection) -> None:
    try:
        connection.release()
    except Exception:  # already broken: nothing left to close cleanly
        log.debug("broker connection close failed", exc_info=True)
