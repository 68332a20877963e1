"""The relay's SQL: claim the oldest unpublished events, mark the confirmed ones published.

The outbox is a ``WorkQueue`` leased by its claiming transaction: a batch stays locked while it is
published, and is marked in that transaction once the broker confirmed. Both statements are built and
compiled once and run on a driver cursor (``Transactions.write_cursor``: no session per batch). The envelope is read as the
text PostgreSQL stores (``envelope::text``) and published as is: no JSON parsing and re-encoding in
the relay (consumers parse the body; key order and spacing carry no meaning). ``occurred_at`` comes
along (the column the claim orders by) for the publish delay metric."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import Cursor
from sqlalchemy import Text, Uuid, bindparam, cast, func, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from dps_common.db import driver_sql, session_cursor
from dps_common.events.headers import message_headers
from dps_common.messaging import OutgoingEvent
from dps_common.messaging.shards import routing_key
from dps_common.outbox.table import OUTBOX as _OUTBOX
from dps_common.outbox.table import OUTBOX_CHANNEL
from dps_common.work_queue import WorkQueue

OUTBOX_QUEUE = WorkQueue(
    _OUTBOX, _OUTBOX.c.id, due=_OUTBOX.c.published_at.is_(None), order_by=_OUTBOX.c.occurred_at, channel=OUTBOX_CHANNEL
)

_CLAIM_UNPUBLISHED = OUTBOX_QUEUE.lock_due(
    _OUTBOX.c.id,
    _OUTBOX.c.event_type,
    cast(_OUTBOX.c.envelope, Text),
    _OUTBOX.c.occurred_at,
    _OUTBOX.c.request_id,
    _OUTBOX.c.organization_id,
)

_MARK_PUBLISHED = (
    update(_OUTBOX)
    .where(_OUTBOX.c.id == func.any(bindparam("ids", type_=ARRAY(Uuid()))))
    .values(published_at=func.now())
)


_CLAIM_SQL = driver_sql(_CLAIM_UNPUBLISHED)
_MARK_SQL = driver_sql(_MARK_PUBLISHED)


@dataclass(frozen=True)
class Claimed:
    """A claimed batch: its events, oldest first, and when each occurred (by event id)."""

    events: list[OutgoingEvent]
    occurred_at: dict[UUID | str, datetime]  # keyed as the publisher reports confirmed ids


def claim_unpublished(session: Session, limit: int, shards: int = 1) -> Claimed:
    """``claim`` in a session's transaction."""
    with session_cursor(session) as cursor:
        return claim(cursor, limit, shards)


def claim(cursor: Cursor[Any], limit: int, shards: int = 1) -> Claimed:
    """The oldest unpublished events, locked until this transaction ends. Rows another relay holds
    are skipped, not waited for, so relays share the backlog instead of queueing behind each other.
    Each event's routing key names its organization's shard when there are several."""
    rows = cursor.execute(_CLAIM_SQL.sql, _CLAIM_SQL.params({"limit": limit}), prepare=True).fetchall()
    return Claimed(
        [
            OutgoingEvent(event_id, event_type, body, message_headers(rid), routing_key(event_type, organization, shards))
            for event_id, event_type, body, _, rid, organization in rows
        ],
        {row[0]: row[3] for row in rows},
    )


def mark_published(cursor: Cursor[Any], event_ids: Sequence[UUID | str]) -> None:
    if event_ids:
        cursor.execute(_MARK_SQL.sql, _MARK_SQL.params({"ids": list(event_ids)}), prepare=True)
