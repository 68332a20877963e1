"""The event consumers: the api's events, from the broker into events and deliveries.

Each runs the one consume loop (``dps_common.messaging.consumer``) on the dispatcher's queue
(``adapters/events_queue.py``; one per shard). After a message it takes whatever else arrives within
a short linger (``WEBHOOK_CONSUMER_LINGER_SECONDS``, 20 ms), ended sooner by a quiet gap
(``WEBHOOK_CONSUMER_QUIET_SECONDS``, 2 ms: the relay's batch, published together, has arrived whole; in
a burst the batch fills at once), and hands the batch to the intake
(``services/event_intake.py``: one transaction); the loop acknowledges it only after that committed,
so a crash in between redelivers the messages and the event ids make the second pass a no-op. The
queue has a single active consumer: with several workers, one consumes and the rest stand by, so
batches stay whole.

A message that is not an event envelope is rejected without requeue (it would fail the same way
forever) before the batch is stored. When the database refuses a batch (a value it cannot hold),
the batch is retried one event at a time so only the bad message is rejected. When the database
fails, the loop puts the messages back, drops the connection and backs off (``TryLater``); an
outage is logged once when it starts and once when it ends (``dps_common.db_retry.OutageLog``).
"""

from __future__ import annotations

import logging
import threading

from kombu.message import Message

from dps_common.db import Transactions
from dps_common.db_retry import OutageLog, is_connection_lost
from dps_common.events.headers import request_id_of
from dps_common.messaging.consumer import ConsumeLoop, TryLater

from dps_webhooks.adapters import metrics
from dps_webhooks.adapters.events_queue import events_queue
from dps_webhooks.services.event_intake import EventIntake, EventsRefused
from dps_webhooks.services.hand_over import HandOver
from dps_webhooks.services.intake import IncomingEvent
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.consumer")

BATCH_SIZE = 32  # the most events one transaction stores: about two rounds of the worker's threads
PREFETCH = 2 * BATCH_SIZE  # messages in flight to this consumer: the next batch arrives while one is stored
STANDBY_DELAY_SECONDS = 5.0  # how much later a worker joins a shard it was not given


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
        self._intake = EventIntake(tx, hand_over=hand_over, lease_seconds=settings.lease_seconds)
        self.queue = events_queue(settings, shard)
        self.standby_seconds = standby_seconds  # before each (re)subscription: see shard_consumers
        self._database = OutageLog(log, "event consumer")
        self._loop = ConsumeLoop(
            settings.amqp_url,
            lambda channel: [self.queue],
            self._accept,
            name=self.queue.name,
            batch_size=BATCH_SIZE,
            linger_seconds=settings.consumer_linger_seconds,
            quiet_seconds=settings.consumer_quiet_seconds,
            prefetch=PREFETCH,
            standby_seconds=standby_seconds,
        )

    def run(self, stop: threading.Event) -> None:
        """Consume until ``stop`` is set; returns within about a second of it."""
        self._loop.run(stop)

    def _accept(self, messages: list[Message]) -> None:
        parsed = [(message, event) for message in messages if (event := _parse(message)) is not None]
        if not parsed:
            return
        try:
            self._store(parsed)
        except EventsRefused:  # some event in the batch can never be stored
            if len(parsed) == 1:
                _refused(*parsed[0])
                return
            log.warning("batch refused by the database; accepting its events one by one", extra={"events": len(parsed)})
            for pair in parsed:
                try:
                    self._store([pair])
                except EventsRefused:
                    _refused(*pair)

    def _store(self, parsed: list[tuple[Message, IncomingEvent]]) -> None:
        events = [event for _, event in parsed]
        try:
            accepted = self._intake.accept(events)
        except EventsRefused:
            raise
        except Exception as exc:  # the database is away (or intake broke): keep the messages
            if is_connection_lost(exc):  # an outage: one line when it starts (the loop backs off)
                self._database.failed(exc)
            else:
                log.exception("events not accepted; requeued", extra={"events": len(events)})
            raise TryLater from exc
        self._database.succeeded()
        log.info("events accepted", extra={"events": len(events), "deliveries": accepted.deliveries})
        for event in events:  # one line per event: found by its id and by the request that caused it
            log.info("event accepted", extra={"eventId": str(event.id), "eventType": event.type, "requestId": event.request_id})


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
