"""Publishing events so that what the broker confirmed is known, a batch at a time.

On AMQP the channel is in confirm mode (RabbitMQ acks each message once it is routed to its queues
and, for persistent messages on durable queues, written), messages are persistent and ``mandatory``:
a message no queue is bound for is returned by the broker, and that counts as a failure, so an
outbox row is never marked sent for an event that went nowhere. A batch is sent back to back and its
confirms are awaited once (not one round trip per message); the result names the events the broker
confirmed, so a caller marks exactly those. The filesystem transport writes synchronously and would
drop an unroutable message silently, so its bindings are checked first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple
from uuid import UUID

from amqp import spec
from kombu.connection import Connection
from kombu.messaging import Producer

from dps_common.messaging.broker import DEFAULT_EVENTS_EXCHANGE, broker_errors, connect, events_exchange, redacted
from dps_common.messaging.confirms import BatchConfirms

log = logging.getLogger("dps.messaging.publisher")

CONFIRM_TIMEOUT_SECONDS = 10.0  # for a whole batch's confirms
_BASIC_PUBLISH, _BASIC_PUBLISH_ARGS = spec.Basic.Publish, "Bssbb"  # ticket, exchange, routing key, mandatory, immediate
PERSISTENT = 2
CONTENT_TYPE = "application/json"
CONTENT_ENCODING = "utf-8"


class PublishFailed(Exception):
    """The broker did not take the message (nack, returned, or the connection failed)."""


class OutgoingEvent(NamedTuple):
    """An event ready to send: its id (the message id), its type (the routing key), its envelope,
    already serialized (sent as is), and the message's headers (``X-Request-Id``: the request that
    caused the event; never in the envelope, whose fields the spec fixes)."""

    id: UUID | str
    type: str
    body: bytes | str
    headers: Mapping[str, str] | None = None
    routing_key: str | None = None  # the type unless sharded (``dps_common.messaging.shards``)


@dataclass(frozen=True)
class Published:
    """What the broker took from a batch: the ids of the events it confirmed, in publish order, and
    why the others were not taken (``None`` when every one was)."""

    confirmed: list[UUID | str]
    failure: PublishFailed | None = None


class EventPublisher:
    """One connection and confirm-mode channel, opened on first use and again after a failure.

    Not thread-safe: one per thread. On any broker trouble the connection is dropped, so that the
    next call reconnects."""

    def __init__(self, url: str, exchange_name: str = DEFAULT_EVENTS_EXCHANGE):
        self.url = url
        self.exchange = events_exchange(exchange_name)
        self._connection: Connection | None = None
        self._channel: Any = None
        self._producer: Producer | None = None  # the filesystem transport's; AMQP publishes on the channel
        self._next_tag = 1  # the delivery tag the broker gives the channel's next publish
        self._confirms: BatchConfirms | None = None  # the batch awaiting its confirms

    def connect(self) -> None:
        """Connect and declare the exchange now (raises ``PublishFailed``); a no-op when connected."""
        if self._channel is not None:
            return
        connection = connect(self.url)
        try:
            connection.ensure_connection(max_retries=1)
            channel = connection.channel()
            self.exchange.declare(channel=channel)
            if hasattr(channel, "events"):  # AMQP: confirms and returns arrive as channel events
                channel.confirm_select()
                channel.events["basic_ack"].add(self._on_ack)
                channel.events["basic_nack"].add(self._on_nack)
                channel.events["basic_return"].add(self._on_return)
                producer = None
            else:
                producer = Producer(channel, exchange=self.exchange)
        except broker_errors(connection) as exc:
            connection.release()
            raise PublishFailed(f"cannot reach the broker at {redacted(self.url)}: {exc!r}") from exc
        self._connection, self._channel, self._producer, self._next_tag = connection, channel, producer, 1
        log.info("broker connected", extra={"broker": redacted(self.url), "exchange": self.exchange.name})

    def publish_batch(self, events: Sequence[OutgoingEvent]) -> Published:
        """Publish ``events`` and wait (at most ``CONFIRM_TIMEOUT_SECONDS``) for the broker's verdict
        on all of them. Never raises for broker trouble: the result says what was confirmed."""
        if not events:
            return Published([])
        try:
            self.connect()
        except PublishFailed as exc:
            return Published([], exc)
        if self._producer is not None:
            return self._write_routed(events)
        return self._publish_confirmed(events)

    def _publish_confirmed(self, events: Sequence[OutgoingEvent]) -> Published:
        channel, exchange, connection = self._channel, self.exchange.name, self._connection
        assert connection is not None  # publish_batch connected
        confirms = self._confirms = BatchConfirms(self._next_tag, len(events))
        deadline = time.monotonic() + CONFIRM_TIMEOUT_SECONDS
        failure: PublishFailed | None = None
        try:
            for event in events:
                properties = {"delivery_mode": PERSISTENT, "message_id": str(event.id)}
                headers = dict(event.headers) if event.headers else {}
                message = channel.prepare_message(event.body, 0, CONTENT_TYPE, CONTENT_ENCODING, headers, properties)
                # py-amqp's basic_publish first tries a non-blocking read for a connection.blocked frame
                # on every message (a socket timeout raised and caught: a quarter of a publish's CPU);
                # the confirms' wait right after reads every frame the broker sent anyway.
                channel.send_method(
                    _BASIC_PUBLISH, _BASIC_PUBLISH_ARGS, (0, exchange, event.routing_key or event.type, True, False), message
                )
                self._next_tag += 1
            while confirms.unsettled:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{confirms.unsettled} events not confirmed in {CONFIRM_TIMEOUT_SECONDS} s")
                connection.drain_events(timeout=remaining)
        except broker_errors(connection) as exc:  # a timeout too: unsettled tags would skew the next batch
            failure = PublishFailed(f"publish failed: {exc!r}")
        except Exception as exc:  # a surprise mid-batch: the channel's state is unknown
            failure = PublishFailed(f"publish not confirmed: {exc!r}")
        if failure is not None:
            self.close()
        self._confirms = None
        acked = [events[position].id for position in confirms.acked()]
        if confirms.returned:  # RabbitMQ acks a returned message too, after returning it
            acked = [event_id for event_id in acked if str(event_id) not in confirms.returned]
        if failure is None and confirms.returned:
            failure = _unrouted(confirms.returned.values())
        if failure is None and confirms.nacked():
            failure = PublishFailed(f"the broker refused {confirms.nacked()} of {len(events)} events (nack)")
        return Published(acked, failure)

    def _write_routed(self, events: Sequence[OutgoingEvent]) -> Published:
        """The filesystem transport: each event whose type a queue is bound for is written at once."""
        producer, connection = self._producer, self._connection
        assert producer is not None and connection is not None  # publish_batch connected
        written: list[UUID | str] = []
        unrouted: list[str] = []
        for event in events:
            key = event.routing_key or event.type
            if not self._routed(key):
                unrouted.append(key)
                continue
            try:
                producer.publish(
                    event.body,
                    routing_key=key,
                    content_type=CONTENT_TYPE,
                    content_encoding=CONTENT_ENCODING,
                    delivery_mode=PERSISTENT,
                    mandatory=True,
                    message_id=str(event.id),
                    headers=dict(event.headers) if event.headers else None,
                )
            except broker_errors(connection) as exc:
                self.close()
                return Published(written, PublishFailed(f"publish failed: {exc!r}"))
            written.append(event.id)
        return Published(written, _unrouted(unrouted) if unrouted else None)

    def _routed(self, routing_key: str) -> bool:
        """Whether a queue is bound for ``routing_key`` (kombu's in-process transports: their
        binding table, shared between processes through the filesystem transport's control folder)."""
        channel, name = self._channel, self.exchange.name
        return bool(channel.typeof(name).lookup(channel.get_table(name), name, routing_key, None))

    def heartbeat(self) -> None:
        """Keep an idle connection alive (call at least every few seconds); drops it when dead."""
        if self._connection is None:
            return
        try:
            self._connection.heartbeat_check()
        except broker_errors(self._connection):
            self.close()

    def close(self) -> None:
        connection, self._connection, self._channel, self._producer = self._connection, None, None, None
        if connection is not None:
            try:
                connection.release()
            except Exception:  # already broken: nothing left to close cleanly
                log.debug("broker connection close failed", exc_info=True)

    def _on_ack(self, delivery_tag: int, multiple: bool) -> None:
        if self._confirms is not None:
            self._confirms.ack(delivery_tag, multiple)

    def _on_nack(self, delivery_tag: int, multiple: bool) -> None:
        if self._confirms is not None:
            self._confirms.nack(delivery_tag, multiple)

    def _on_return(self, exception: Exception, exchange: str, routing_key: str, message: Any) -> None:
        message_id = message.properties.get("message_id") if hasattr(message, "properties") else None
        log.warning("event returned by the broker", extra={"eventId": message_id, "routingKey": routing_key})
        if message_id and self._confirms is not None:
            self._confirms.returned[message_id] = routing_key


def _unrouted(event_types: Iterable[str]) -> PublishFailed:
    names = ", ".join(repr(event_type) for event_type in sorted(set(event_types)))
    return PublishFailed(f"no queue is bound for event type {names}")
