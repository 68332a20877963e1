"""Events over the broker: the exchange, connections, a confirming batch publisher and reconnect pacing.

kombu is the one broker library. ``amqp://`` URLs reach RabbitMQ; ``filesystem:///folder`` is the
zero-install transport for ``make run`` (processes on one machine share the folder)."""

from dps_common.messaging.backoff import Backoff
from dps_common.messaging.broker import (
    DEFAULT_AMQP_URL,
    DEFAULT_EVENTS_EXCHANGE,
    broker_errors,
    connect,
    events_exchange,
    redacted,
)
from dps_common.messaging.publisher import EventPublisher, OutgoingEvent, Published, PublishFailed

__all__ = [
    "DEFAULT_AMQP_URL",
    "DEFAULT_EVENTS_EXCHANGE",
    "Backoff",
    "EventPublisher",
    "OutgoingEvent",
    "PublishFailed",
    "Published",
    "broker_errors",
    "connect",
    "events_exchange",
    "redacted",
]
