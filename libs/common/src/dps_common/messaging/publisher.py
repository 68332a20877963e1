"""Publishing events so that a returned call means the broker has them.

On AMQP the channel is in confirm mode (RabbitMQ acks each message once it is routed to its queues
and, for persistent messages on durable queues, written), messages are persistent and ``mandatory``:
a message no queue is bound for is returned by the broker, and that counts as a failure, so an
outbox row is never marked sent for an event that went nowhere. The filesystem transport writes
synchronously and would drop an unroutable message silently, so its bindings are checked first.
"""

from __future__ import annotations

import logging
from typing import Any

from kombu import Connection, Producer

from dps_common.http.json import dumps
from dps_common.messaging.broker import DEFAULT_EVENTS_EXCHANGE, broker_errors, connect, events_exchange, redacted

log = logging.getLogger("dps.messaging.publisher")

CONFIRM_TIMEOUT_SECONDS = 10.0
PERSISTENT = 2


class PublishFailed(Exception):
    """The broker did not take the message (nack, returned, or the connection failed)."""


class EventPublisher:
    """One connection and confirming producer, opened on first use and again after a failure.

    Not thread-safe: one per thread. ``publish`` raises ``PublishFailed`` on any broker trouble,
    after dropping the connection so that the next call reconnects."""

    def __init__(self, url: str, exchange_name: str = DEFAULT_EVENTS_EXCHANGE):
        self.url = url
        self.exchange = events_exchange(exchange_name)
        self._connection: Connection | None = None
        self._producer: Producer | None = None
        self._returned: set[str] = set()
        self._checks_routes = False  # set for transports that drop unroutable messages silently

    def connect(self) -> None:
        """Connect and declare the exchange now (raises ``PublishFailed``); a no-op when connected."""
        if self._producer is not None:
            return
        connection = connect(self.url, confirm_publish=True)
        try:
            connection.ensure_connection(max_retries=1)
            channel = connection.channel()
            # only AMQP returns unroutable messages; the filesystem transport has no such event
            on_return = self._on_return if hasattr(channel, "events") else None
            producer = Producer(channel, exchange=self.exchange, on_return=on_return)
            self._checks_routes = on_return is None
            self.exchange.declare(channel=producer.channel)
        except broker_errors(connection) as exc:
            connection.release()
            raise PublishFailed(f"cannot reach the broker at {redacted(self.url)}: {exc!r}") from exc
        self._connection, self._producer = connection, producer
        log.info("broker connected", extra={"broker": redacted(self.url), "exchange": self.exchange.name})

    def publish(self, envelope: dict[str, Any]) -> None:
        """Publish one event envelope and wait for the broker's confirm."""
        self.connect()
        assert self._connection is not None and self._producer is not None
        message_id = str(envelope["id"])
        routing_key = str(envelope["type"])
        if self._checks_routes and not self._routed(routing_key):
            raise PublishFailed(f"no queue is bound for event type {routing_key!r}")
        try:
            self._producer.publish(
                dumps(envelope),
                routing_key=routing_key,
                content_type="application/json",
                content_encoding="utf-8",
                delivery_mode=PERSISTENT,
                mandatory=True,
                message_id=message_id,
                confirm_timeout=CONFIRM_TIMEOUT_SECONDS,
                timeout=CONFIRM_TIMEOUT_SECONDS,
            )
        except broker_errors(self._connection) as exc:
            self.close()
            raise PublishFailed(f"publish failed: {exc!r}") from exc
        except Exception as exc:  # py-amqp's MessageNacked and timeouts are not connection errors
            self.close()
            raise PublishFailed(f"publish not confirmed: {exc!r}") from exc
        # RabbitMQ sends basic.return before the confirm, so a returned message is known by now
        if message_id in self._returned:
            self._returned.discard(message_id)
            raise PublishFailed(f"no queue is bound for event type {envelope['type']!r}")

    def _routed(self, routing_key: str) -> bool:
        """Whether a queue is bound for ``routing_key`` (kombu's in-process transports: their
        binding table, shared between processes through the filesystem transport's control folder)."""
        channel, name = self._producer.channel, self.exchange.name
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
        connection, self._connection, self._producer = self._connection, None, None
        self._returned.clear()
        if connection is not None:
            try:
                connection.release()
            except Exception:  # already broken: nothing left to close cleanly
                log.debug("broker connection close failed", exc_info=True)

    def _on_return(self, exception: Exception, exchange: str, routing_key: str, message: Any) -> None:
        message_id = message.properties.get("message_id") if hasattr(message, "properties") else None
        log.warning("event returned by the broker", extra={"eventId": message_id, "routingKey": routing_key})
        if message_id:
            self._returned.add(message_id)
