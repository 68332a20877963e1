"""Broker connections and the events exchange.

Every service publishes its domain events to one durable topic exchange (``dps.events`` unless
``EVENTS_EXCHANGE`` says otherwise) with the event type as routing key, so a consumer binds the
types it wants (``quote.*``) or everything (``#``).

``AMQP_URL`` names one node, or a cluster's nodes separated by ``;``
(``amqp://u:p@rabbit-0:5672/dps;amqp://u:p@rabbit-1:5672/dps;...``): kombu's failover tries them in
turn when it connects. Each connection starts at a random node of the list, so a service's processes
spread over the cluster, and a lost node's clients reconnect to the next one.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kombu.connection import Connection
from kombu.entity import Exchange
from kombu.exceptions import KombuError, OperationalError

from dps_common.messaging import filesystem

DEFAULT_AMQP_URL = "amqp://guest:guest@127.0.0.1:5672//"
DEFAULT_EVENTS_EXCHANGE = "dps.events"

HEARTBEAT_SECONDS = 30  # a dead broker or peer is noticed within about two of these
CONNECT_TIMEOUT_SECONDS = 5.0
SOCKET_TIMEOUT_SECONDS = 10.0  # bounds a blocked write (a broker that stopped reading)
FILESYSTEM_POLL_SECONDS = 0.1  # the filesystem transport polls its folder for messages


def events_exchange(name: str = DEFAULT_EVENTS_EXCHANGE) -> Exchange:
    return Exchange(name, type="topic", durable=True, auto_delete=False)


def connect(url: str) -> Connection:
    """A (lazy) connection for ``url``. Publisher confirms are the publisher's own: it puts its
    channel in confirm mode and waits once per batch, not per message."""
    if url.startswith("filesystem:"):
        return Connection(transport=filesystem.Transport, transport_options=filesystem_options(url))
    nodes = node_urls(url)
    first = random.randrange(len(nodes))  # not a secret: where this connection starts in the list
    return Connection(
        nodes[0] if len(nodes) == 1 else nodes[first:] + nodes[:first],
        failover_strategy="round-robin",  # each node once before any twice: one lost node costs one try
        heartbeat=HEARTBEAT_SECONDS,
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        transport_options={
            "read_timeout": SOCKET_TIMEOUT_SECONDS,
            "write_timeout": SOCKET_TIMEOUT_SECONDS,
        },
    )


def node_urls(url: str) -> list[str]:
    """The node URLs of ``url`` (one, or several separated by ``;``), in the order given."""
    nodes = [part.strip() for part in url.split(";") if part.strip()]
    if not nodes:
        raise ValueError("AMQP_URL names no broker node")
    return nodes


def filesystem_options(url: str) -> dict[str, Any]:
    """``filesystem:///folder``: messages in ``folder/data``, exchange bindings in ``folder/control``
    (that table is what lets a topic exchange route between processes)."""
    folder = Path(urlsplit(url).path or ".").resolve()
    data, control = folder / "data", folder / "control"
    data.mkdir(parents=True, exist_ok=True)
    control.mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(data),
        "data_folder_out": str(data),
        "control_folder": str(control),
        "polling_interval": FILESYSTEM_POLL_SECONDS,
    }


def broker_errors(connection: Connection) -> tuple[type[BaseException], ...]:
    """What a lost or refusing broker raises on ``connection``: worth a reconnect, not a crash."""
    return (
        *connection.connection_errors,
        *connection.channel_errors,
        KombuError,
        OperationalError,
        OSError,
    )


def redacted(url: str) -> str:
    """``url`` (each of its nodes' URLs) without its password, for logs."""
    if ";" in url:
        return ";".join(redacted(node) for node in node_urls(url))
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
