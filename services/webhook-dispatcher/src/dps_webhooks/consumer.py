"""The event consumer: the api's events, from the broker into events and deliveries.

It binds a durable queue to the events exchange for every type (``#``) and, per message, stores the
event and its deliveries in one transaction (``accept_event``, which deduplicates on the event id),
acknowledging only after that transaction committed: a crash in between redelivers the message and
the event id makes the second pass a no-op. A message that is not an event envelope is rejected
without requeue (it would fail the same way forever). When the database fails, the message goes
back to the queue, the connection is dropped (returning the prefetched messages too) and the
consumer backs off before trying again; a lost broker is reconnected forever with the same backoff.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kombu import Connection, Consumer, Queue
from kombu.message import Message
from sqlalchemy.exc import DataError, IntegrityError

from dps_common.db import Transactions
from dps_common.messaging import Backoff, broker_errors, connect, events_exchange, redacted

from dps_webhooks.services.intake import IncomingEvent, accept_event
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.consumer")

PREFETCH = 32  # messages in flight to this consumer; each is one short transaction
DRAIN_SECONDS = 0.5  # how often the loop looks at ``stop`` and the heartbeat while idle


class _Unavailable(Exception):
    """The database (or intake) failed on a valid message: back off, then consume again."""


class EventConsumer:
    def __init__(self, settings: Settings, tx: Transactions):
        self._settings = settings
        self._tx = tx
        self._queue = Queue(
            settings.events_queue,
            exchange=events_exchange(settings.events_exchange),
            routing_key="#",
            durable=True,
            auto_delete=False,
        )
        self._backoff = Backoff()

    def run(self, stop: threading.Event) -> None:
        """Consume until ``stop`` is set; returns within about a second of it."""
        while not stop.is_set():
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
        channel.basic_qos(0, PREFETCH, False)  # positional: AMQP and kombu's virtual transports name them apart
        consumer = Consumer(channel, queues=[self._queue], on_message=self._on_message, auto_declare=True)
        consumer.consume()
        log.info("consuming events", extra={"queue": self._queue.name, "exchange": self._queue.exchange.name})
        while not stop.is_set():
            try:
                connection.drain_events(timeout=DRAIN_SECONDS)
            except TimeoutError:
                pass
            connection.heartbeat_check()

    def _on_message(self, message: Message) -> None:
        message_id = message.properties.get("message_id")
        try:
            event = IncomingEvent.from_envelope(_text(message.body))
        except (ValueError, TypeError, AttributeError):  # not JSON, not an object, wrong field types
            log.error("message rejected: not an event envelope", extra={"messageId": message_id})
            message.reject(requeue=False)
            return
        try:
            with self._tx() as session:
                deliveries = accept_event(session, event)
        except (DataError, IntegrityError):  # this event can never be stored: retrying would loop
            log.exception("event rejected: the database refused it", extra={"eventId": str(event.id)})
            message.reject(requeue=False)
            return
        except Exception as exc:  # the database is away (or intake broke): keep the message
            log.exception("event not accepted; requeued", extra={"eventId": str(event.id)})
            message.requeue()
            raise _Unavailable from exc
        message.ack()
        self._backoff.reset()
        log.info("event accepted", extra={"eventId": str(event.id), "eventType": event.type, "deliveries": deliveries})


def _text(body: Any) -> str:
    return body.decode("utf-8") if isinstance(body, bytes | bytearray) else str(body)


def _release(connection: Connection) -> None:
    try:
        connection.release()
    except Exception:  # already broken: nothing left to close cleanly
        log.debug("broker connection close failed", exc_info=True)
