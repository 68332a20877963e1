"""The durable queues the services declare: quorum queues unless ``AMQP_QUEUE_TYPE`` says otherwise.

A classic queue lives on one node: lose that node and its queue and messages are gone (or
unavailable until it returns). A quorum queue (RabbitMQ's Raft-replicated queue) keeps every
message it confirmed on a majority of the cluster's nodes and elects a new leader when its leader's
node is lost, so a three-node cluster loses nothing with one node down. Publisher confirms then mean
"on a majority", and single active consumer works as on a classic queue (RabbitMQ 3.10 and later).

``AMQP_QUEUE_TYPE`` is ``quorum`` by default; ``classic`` declares the queues as before (no
``x-queue-type`` argument at all), for a broker that already holds classic queues of these names:
RabbitMQ refuses to redeclare a queue with another type (PRECONDITION_FAILED), so an existing
deployment drains its classic queues (or deletes them) before it switches (deploy/README, "Scale").

Only durable queues that outlive a connection are quorum queues. A process's own subscription queue
(``dps_common.messaging.subscriber``: exclusive, auto-delete) stays classic: RabbitMQ refuses an
exclusive or auto-delete quorum queue, and the subscriber makes a new queue on another node when
its node is lost (libs/common/tests/integration/test_queue_types.py shows both). kombu's filesystem
transport (``make run``) ignores queue arguments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from dps_common.settings import SettingsError

QUORUM = "quorum"
CLASSIC = "classic"
QUEUE_TYPES = (QUORUM, CLASSIC)
DEFAULT_QUEUE_TYPE = QUORUM
QUEUE_TYPE_VARIABLE = "AMQP_QUEUE_TYPE"


def queue_type(environ: Mapping[str, str] | None = None) -> str:
    """``AMQP_QUEUE_TYPE`` (``quorum`` unless set); anything else than the two types is refused."""
    value = (os.environ if environ is None else environ).get(QUEUE_TYPE_VARIABLE, "") or DEFAULT_QUEUE_TYPE
    if value not in QUEUE_TYPES:
        raise SettingsError(f"invalid configuration: {QUEUE_TYPE_VARIABLE} must be one of {', '.join(QUEUE_TYPES)}")
    return value


def durable_queue_arguments(*, single_active_consumer: bool = False, type_: str | None = None) -> dict[str, Any]:
    """The ``queue_arguments`` of a durable queue of type ``type_`` (default: ``queue_type()``)."""
    arguments: dict[str, Any] = {}
    if (type_ or queue_type()) == QUORUM:
        arguments["x-queue-type"] = QUORUM
    if single_active_consumer:
        arguments["x-single-active-consumer"] = True
    return arguments
