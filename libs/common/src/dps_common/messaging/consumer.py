"""The one consume loop: every consumer of the broker runs it (a service's events queue, a process's
own subscription) and brings only its queues and what it does with a batch of messages.

The loop connects, declares and binds the consumer's queues (``queues(channel)``, asked again on
every connection), consumes them and hands the messages over in batches: after a message it takes
whatever else arrives within ``linger_seconds``, up to ``batch_size``, and with ``quiet_seconds`` (above 0) no
longer than until nothing has come for that long (a burst published together, such as the outbox
relay's batch, has arrived: waiting out the rest of the linger would only add latency). ``on_consuming`` runs once the
queues are bound and before any message is handed over (from then on nothing published is missed).

Acknowledgement is the loop's: once ``handle(batch)`` returns, every message of the batch it did not
settle itself (``message.reject``) is acknowledged, so a consumer acks only after its own work is
done (for a database, committed). A handler that cannot do its work now raises ``TryLater``: the
batch goes back to the queue, the connection is dropped (returning every other prefetched message)
and the loop backs off before consuming again. With ``no_ack`` the broker forgets a message as it
sends it (a broadcast nobody waits on) and the loop acknowledges nothing.

A lost or absent broker, and any surprise, is retried forever with the same backoff (``Backoff``),
reset once consuming works again. ``run(stop)`` returns within about ``DRAIN_SECONDS`` of ``stop``.
kombu's virtual transports (the filesystem one of ``make run``) have no auto-delete: there the
consumer's ``auto_delete`` queues are deleted when it stops, or every later message would be copied
to a queue nobody reads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from kombu.connection import Connection
from kombu.entity import Queue
from kombu.message import Message
from kombu.messaging import Consumer

from dps_common.messaging.backoff import Backoff
from dps_common.messaging.broker import broker_errors, connect, redacted

log = logging.getLogger("dps.messaging.consumer")

DRAIN_SECONDS = 1.0  # how often the loop looks at ``stop`` and the broker's heartbeat while idle (a wake-up each)


class TryLater(Exception):
    """Raised by a handler that cannot handle the batch now (its database is away): requeue, back off."""


def _nothing() -> None:
    pass


class ConsumeLoop:
    def __init__(
        self,
        url: str,
        queues: Callable[[Any], Sequence[Queue]],
        handle: Callable[[list[Message]], None],
        *,
        name: str,
        batch_size: int = 1,
        linger_seconds: float = 0.0,
        quiet_seconds: float = 0.0,
        prefetch: int = 0,
        no_ack: bool = False,
        standby_seconds: float = 0.0,
        on_consuming: Callable[[], None] = _nothing,
        backoff: Backoff | None = None,
    ):
        self.url = url
        self.name = name  # in its log lines
        self._queues = queues
        self._handle = handle
        self._batch_size = batch_size
        self._linger = linger_seconds
        self._quiet = quiet_seconds  # a batch ends once nothing arrived for this long (0: at the linger's end)
        self._prefetch = prefetch  # messages in flight to this consumer (0: the broker's default, no limit)
        self._no_ack = no_ack
        self._standby_seconds = standby_seconds  # before each (re)subscription
        self._on_consuming = on_consuming
        self._backoff = backoff or Backoff()
        self._handler_failed = False  # the last failure was TryLater: only a handled batch resets the backoff
        self.consuming = threading.Event()  # set while the queues are bound and consumed

    def run(self, stop: threading.Event) -> None:
        """Consume until ``stop`` is set."""
        while not stop.is_set():
            if stop.wait(self._standby_seconds):
                return
            connection = connect(self.url)
            try:
                connection.ensure_connection(max_retries=1, interval_start=0)  # the backoff paces retries
                self._consume(connection, stop)
            except TryLater:
                self._handler_failed = True
                self._backoff.wait(stop)
            except broker_errors(connection) as exc:
                log.warning(
                    "broker unavailable; reconnecting",
                    extra={"consumer": self.name, "broker": redacted(self.url), "error": repr(exc)},
                )
                self._backoff.wait(stop)
            except Exception:  # never lose the consumer's thread to a surprise
                log.exception("consumer failed; restarting", extra={"consumer": self.name})
                self._backoff.wait(stop)
            finally:
                self.consuming.clear()
                _release(connection)

    def _consume(self, connection: Connection, stop: threading.Event) -> None:
        channel = connection.channel()
        amqp = connection.transport.driver_type == "amqp"
        if self._prefetch:
            channel.basic_qos(0, self._prefetch, False)  # positional: AMQP and kombu's virtual transports name them apart
        queues = list(self._queues(channel))
        received: list[Message] = []
        consumer = Consumer(channel, queues=queues, on_message=received.append, no_ack=self._no_ack, auto_declare=True)
        consumer.consume()  # declared and bound: from here on nothing published is missed
        try:
            self._on_consuming()
            self.consuming.set()
            if not self._handler_failed:
                self._backoff.reset()
            log.info("consuming", extra={"consumer": self.name, "queues": [queue.name for queue in queues]})
            while not stop.is_set():
                if received or _drain(connection, DRAIN_SECONDS):
                    until = time.monotonic() + self._linger
                    while len(received) < self._batch_size and _drain(connection, self._next_wait(until)):
                        pass  # what arrives within the linger (or until a quiet gap), then what has arrived
                    batch, received[:] = received[: self._batch_size], received[self._batch_size :]
                    self._settle(batch, amqp)
                connection.heartbeat_check()
        finally:
            if not amqp and stop.is_set():
                for queue in queues:
                    if queue.auto_delete:
                        queue(channel).delete()

    def _next_wait(self, until: float) -> float:
        left = max(0.0, until - time.monotonic())
        return min(left, self._quiet) if self._quiet > 0 else left

    def _settle(self, batch: list[Message], amqp: bool) -> None:
        try:
            self._handle(batch)
        except TryLater:
            if not self._no_ack:
                for message in batch:
                    if not message.acknowledged:
                        message.requeue()
            raise
        self._handler_failed = False
        self._backoff.reset()
        if not self._no_ack:
            acknowledge([message for message in batch if not message.acknowledged], many=amqp)


def acknowledge(messages: list[Message], *, many: bool) -> None:
    """Every earlier message of the channel is settled by now (the loop settles a batch before the
    next), so on AMQP one ``multiple`` ack of the last settles exactly these, in one frame; kombu's
    virtual transports ignore ``multiple``: one by one there."""
    if not messages:
        return
    if many:
        messages[-1].ack(multiple=True)
        return
    for message in messages:
        message.ack()


def _drain(connection: Connection, timeout: float) -> bool:
    """Handle what the broker sent within ``timeout``; False when nothing came."""
    try:
        connection.drain_events(timeout=timeout)
    except TimeoutError:
        return False
    return True


def _release(connection: Connection) -> None:
    try:
        connection.release()
    except Exception:  # already broken: nothing left to close cleanly
        log.debug("consumer connection close failed", exc_info=True)
