"""A process's own subscription to some event types: every subscribing process gets every message.

Unlike a service's durable work queue (one copy per service, shared by its workers), a subscriber
declares a queue of its own (named after the host and process, exclusive, auto-delete) bound to the
events exchange for the routing keys it wants (each also followed by a shard word: relays with
``EVENTS_SHARDS`` append one, ``dps_common.messaging.shards``), and consumes it on a daemon thread. It suits
broadcasts that each process acts on locally, such as dropping a revoked key from its cache.

The thread never blocks the caller. It runs the one consume loop (``dps_common.messaging.consumer``):
a lost or absent broker is retried forever with backoff, and ``on_connected`` runs after each (re)subscription, once the queue is bound and before messages flow,
so the caller can make up for whatever was published while it was not subscribed. A message the
handler fails on is logged and dropped (the queue is this process's alone; nothing waits behind it).

The filesystem transport (``make run``) routes a topic exchange to every bound queue through its
control folder, so it broadcasts too; but it has no exclusive or auto-delete queues. There the
loop deletes the queue (its binding) when it stops, and the subscriber removes at start the bindings (and unread messages) of
subscribers of this host whose process is gone.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from kombu.entity import Queue, binding
from kombu.message import Message

from dps_common.messaging.backoff import Backoff
from dps_common.messaging.broker import events_exchange
from dps_common.messaging.consumer import DRAIN_SECONDS, ConsumeLoop
from dps_common.messaging.shards import subscriber_bindings

log = logging.getLogger("dps.messaging.subscriber")

__all__ = ["DRAIN_SECONDS", "Subscriber", "prune_dead_subscribers", "queue_name"]

QUEUE_PREFIX = "dps.subscriber"


def queue_name(purpose: str) -> str:
    """``dps.subscriber.<purpose>.<host>.<pid>.<random>``: findable in the broker's queue list, and
    on the filesystem transport, the process that owns it (see ``prune_dead_subscribers``)."""
    return f"{QUEUE_PREFIX}.{purpose}.{_host()}.{os.getpid()}.{uuid.uuid4().hex[:8]}"


def _host() -> str:
    return socket.gethostname().replace(".", "-")  # the name splits on dots


class Subscriber:
    """The subscription on a daemon thread of its own, consumed by the one consume loop
    (``dps_common.messaging.consumer``): a new queue on every connection, nothing acknowledged."""

    def __init__(
        self,
        url: str,
        exchange_name: str,
        routing_keys: Sequence[str],
        on_message: Callable[[bytes | str], None],
        *,
        purpose: str,
        on_connected: Callable[[], None] = lambda: None,
        backoff: Backoff | None = None,
    ):
        self.url = url
        self._exchange = events_exchange(exchange_name)
        self._routing_keys = tuple(routing_keys)
        self._on_message = on_message
        self._purpose = purpose
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.queue = self._new_queue()  # a new one per connection (see ``_queues``)
        self._loop = ConsumeLoop(
            url, self._queues, self._handle, name=f"subscriber {purpose}", no_ack=True,
            on_consuming=on_connected, backoff=backoff,
        )
        self.subscribed = self._loop.consuming  # set while the queue is bound and consumed

    def start(self) -> None:
        """Start consuming on a daemon thread (call it in the process that uses it: after a fork)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self.run, name=f"subscriber {self._purpose}", daemon=True)
        self._thread.start()
        atexit.register(self.stop)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def run(self) -> None:
        """Subscribe and consume until ``stop``; returns within about ``DRAIN_SECONDS`` of it."""
        self._loop.run(self._stop)

    def _queues(self, channel: Any) -> list[Queue]:
        if not hasattr(channel, "events"):  # kombu's virtual transports: no exclusive queues to vanish
            prune_dead_subscribers(channel, self._exchange.name)
        # a new name each time: the broker may not have dropped the last connection's exclusive queue yet
        self.queue = self._new_queue()
        return [self.queue]

    def _new_queue(self) -> Queue:
        return Queue(
            queue_name(self._purpose),
            exchange=self._exchange,
            bindings=[binding(self._exchange, routing_key=key) for key in subscriber_bindings(self._routing_keys)],
            durable=False,
            exclusive=True,
            auto_delete=True,
        )

    def _handle(self, messages: list[Message]) -> None:
        for message in messages:
            try:
                self._on_message(message.body)
            except Exception:  # the queue is this process's alone: nothing waits behind the message
                log.exception("subscriber message not handled", extra={"purpose": self._purpose})


def prune_dead_subscribers(channel: Any, exchange: str) -> None:
    """The filesystem transport: remove the bindings and unread messages of this host's subscriber
    queues whose process has exited (one killed before it could unbind)."""
    host = _host()
    for entry in channel.get_table(exchange):
        owner = _owner(entry.queue, host)
        if owner is not None and not _alive(owner):
            channel._delete(entry.queue, exchange, entry.routing_key, entry.pattern)  # and its messages


def _owner(queue: str, host: str) -> int | None:
    """The pid in a subscriber queue's name made on ``host``; None for any other queue."""
    parts = queue.rsplit(".", 3)  # [prefix.purpose, host, pid, random]
    if len(parts) != 4 or not parts[0].startswith(QUEUE_PREFIX + ".") or parts[1] != host:
        return None
    return int(parts[2]) if parts[2].isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True
