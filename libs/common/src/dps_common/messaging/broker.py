"""Broker connections and the events exchange.

Every service publishes its domain events to one durable topic exchange (``dps.events`` unless
``EVENTS_EXCHANGE`` says otherwise) with the event type as routing key, so a consumer binds the
types it wants (``quote.*``) or everything (``#``).
"""

from __future__ import annotations

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
    return Connection(
        url,
        heartbeat=HEARTBEAT_SECONDS,
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        transport_options={
            "read_timeout": SOCKET_TIMEOUT_SECONDS,
            "write_timeout": SOCKET_TIMEOUT_SECONDS,
        },
    )


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
    """``url`` without its password, for logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
