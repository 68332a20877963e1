"""Turning an event into deliveries: one per subscribed endpoint of its organization.

Used by the consumer (events from the api, a batch per transaction), test deliveries and manual
retries. The event row is the deduplication point: a redelivered message finds its id taken and
creates nothing. ``ACTIVE``
endpoints get a delivery due now; ``PAUSED`` ones a held delivery (sent after resume); ``DISABLED``
ones nothing, and nothing is backfilled later. A payload over 1 MB is stored as ``EXHAUSTED`` and
never sent; it does not count against the endpoint (the receiver did nothing wrong). Internal events
(``internal.*``: the services' messages to each other, such as a revoked API key) are no customer's
business: they are not stored and nothing is delivered, whatever an endpoint subscribed to.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from psycopg import Cursor
from sqlalchemy import (
    ColumnElement,
    DateTime,
    Integer,
    String,
    Text,
    Uuid,
    func,
    select,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from dps_common.db import driver_sql, session_cursor
from dps_common.events.envelope import is_internal
from dps_common.ids import new_id
from dps_common.json import loads

from dps_webhooks.db.arrays import as_arrays, unnested
from dps_webhooks.db.base import Base
from dps_webhooks.db.deliveries import DELIVERIES, DELIVERY_COLUMNS, INSERT_DELIVERIES, first_claim, notify_due
from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from dps_webhooks.domain.claims import Claimed

MAX_PAYLOAD_BYTES = 1024 * 1024  # spec section 8
OVERSIZED_MESSAGE = "The payload is larger than 1 MB; it is not delivered."


@dataclass(frozen=True)
class IncomingEvent:
    id: UUID
    organization_id: UUID
    type: str
    occurred_at: datetime
    body: str  # the envelope exactly as it will be sent and signed; "" when read back oversized
    size: int  # the payload's size in bytes
    request_id: str | None = None  # the message's X-Request-Id: the request that caused the event

    @classmethod
    def from_envelope(cls, body: str, request_id: str | None = None) -> "IncomingEvent":
        """Parse a published envelope; ``ValueError`` when it is not one."""
        envelope: dict[str, Any] = loads(body)
        try:
            return cls(
                UUID(envelope["id"]),
                UUID(envelope["organizationId"]),
                str(envelope["type"]),
                datetime.fromisoformat(envelope["occurredAt"]),
                body,
                len(body.encode()),
                request_id,
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not an event envelope: {exc}") from exc

    @property
    def oversized(self) -> bool:
        return self.size > MAX_PAYLOAD_BYTES


@dataclass(frozen=True)
class Accepted:
    deliveries: int  # created, whatever their state
    claimed: list[Claimed]  # the ones stored already claimed for the caller to attempt


def _take_none(count: int) -> int:
    return 0


def accept_events(
    session: Session,
    events: list[IncomingEvent],
    *,
    take_up_to: Callable[[int], int] = _take_none,
    lease_seconds: float = 0.0,
) -> Accepted:
    """``accept_batch`` in a session's transaction."""
    with session_cursor(session) as cursor:
        return accept_batch(cursor, events, take_up_to=take_up_to, lease_seconds=lease_seconds)


def accept_batch(
    cursor: Cursor[Any],
    events: list[IncomingEvent],
    *,
    take_up_to: Callable[[int], int] = _take_none,
    lease_seconds: float = 0.0,
) -> Accepted:
    """Store a batch of events and their deliveries in two statements. Events already accepted
    (or repeated within the batch) create nothing.

    ``take_up_to(n)`` is asked how many of the ``n`` deliveries due now the caller (the consumer, for
    its own worker) will attempt itself. Those are stored already claimed, as a worker's claim would
    leave them (a lease of ``lease_seconds``, a claim token, attempt 1), and returned: no claim
    statement and no wake-up for them. The rest are due for any worker, which ``NOTIFY`` wakes.
    """
    fresh = _unique_in_id_order([event for event in events if not is_internal(event.type)])
    if not fresh:
        return Accepted(0, [])
    # The new events' rows and, in the same statement, the endpoints of their organizations: an
    # event already known (a redelivery) returns nothing, so it creates nothing.
    by_id = {event.id: event for event in fresh}
    found = cursor.execute(_STORE_SQL.sql, _STORE_SQL.params(_event_arrays(fresh)), prepare=True).fetchall()
    pairs = [(by_id[row[0]], _Subscriber(*row[1:])) for row in found]
    pairs = [(event, endpoint) for event, endpoint in pairs if _subscribed(endpoint.event_types, event.type)]
    # offsets from the statement's now(): one clock for every row, no round trip to read it
    rows = [
        delivery_row(event, endpoint.id, now=_NO_OFFSET, held=endpoint.status != "ACTIVE")
        for event, endpoint in pairs
    ]
    due = [i for i, row in enumerate(rows) if row["next_attempt_at"] is not None]
    taken = due[: max(0, min(take_up_to(len(due)), len(due)))]
    token = uuid.uuid4()
    claim = first_claim(token, lease_seconds)
    claimed = []
    for i in taken:
        (event, endpoint), row = pairs[i], rows[i]
        row.update(claim)
        claimed.append(
            Claimed(
                row["id"],
                endpoint.id,
                event.id,
                1,
                False,
                endpoint.url,
                endpoint.secret_sealed,
                event.body,
                token,
                request_id=event.request_id,
                rate_limit_per_second=endpoint.rate_limit_per_second,
            )
        )
    if rows:
        cursor.execute(_INSERT_DELIVERIES_SQL.sql, _INSERT_DELIVERIES_SQL.params(as_arrays(rows, DELIVERY_COLUMNS)), prepare=True)
    if len(due) > len(taken):
        cursor.execute(_NOTIFY_DUE_SQL.sql, _NOTIFY_DUE_SQL.params(), prepare=True)  # notify_due's statement
    return Accepted(len(rows), claimed)


@dataclass(frozen=True)
class _Subscriber:
    """An endpoint of a stored event's organization, as ``_STORE_EVENTS_WITH_SUBSCRIBERS`` returns it."""

    id: UUID
    status: str
    event_types: list[str]
    url: str
    secret_sealed: bytes
    rate_limit_per_second: int | None


def _unique_in_id_order(events: list[IncomingEvent]) -> list[IncomingEvent]:
    """The batch without repeats, in id order: concurrent consumers insert in the same order, so
    they never deadlock on each other's uncommitted ids."""
    unique: dict[UUID, IncomingEvent] = {}
    for event in events:
        unique.setdefault(event.id, event)
    return [unique[event_id] for event_id in sorted(unique)]


def _event_arrays(events: list[IncomingEvent]) -> dict[str, list[Any]]:
    return as_arrays([_event_row(event) for event in events], _EVENT_COLUMNS)


def _store_new_events(session: Session, events: list[IncomingEvent]) -> list[IncomingEvent]:
    """Insert the events not seen before (one statement); the ones inserted, in id order."""
    ordered = _unique_in_id_order(events)
    if not ordered:
        return []
    inserted = set(session.connection().execute(_INSERT_EVENTS, _event_arrays(ordered)).scalars())
    return [event for event in ordered if event.id in inserted]


def _subscribed(event_types: list[str], event_type: str) -> bool:
    return not event_types or event_type in event_types  # empty means every type


def store_event(session: Session, event: IncomingEvent) -> bool:
    """Insert the event once; False when its id is already known."""
    return bool(_store_new_events(session, [event]))


def _event_row(event: IncomingEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "organization_id": event.organization_id,
        "event_type": event.type,
        "occurred_at": event.occurred_at,
        "body": None if event.oversized else event.body,
        "body_bytes": event.size,
        "request_id": event.request_id,
    }


def delivery_row(
    event: IncomingEvent,
    endpoint_id: UUID,
    *,
    now: ColumnElement[datetime] | timedelta,
    held: bool,
    is_test: bool = False,
    retry_of: UUID | None = None,
) -> dict[str, Any]:
    """The columns of a new delivery, the one source of its rules: due ``now``, held
    (``next_attempt_at`` NULL) or, when the payload is over the limit, ``EXHAUSTED`` at once.
    ``now`` is the transaction's time as ``func.now()``, or (for ``accept_events``, whose statement
    adds its times to its own now()) the offset ``_NO_OFFSET``."""
    oversized = event.oversized
    return {
        "id": new_id(),
        "organization_id": event.organization_id,
        "endpoint_id": endpoint_id,
        "event_id": event.id,
        "event_type": event.type,
        "status": "EXHAUSTED" if oversized else "PENDING",
        "is_test": is_test,
        "retry_of": retry_of,
        "attempt_count": 0,
        "next_attempt_at": None if oversized or held else now,
        "last_error_message": OVERSIZED_MESSAGE if oversized else None,
        "completed_at": now if oversized else None,
    }


def add_delivery(
    session: Session,
    event: IncomingEvent,
    endpoint_id: UUID,
    *,
    held: bool = False,
    is_test: bool = False,
    retry_of: UUID | None = None,
) -> WebhookDelivery:
    """A new delivery of a stored event (see ``delivery_row``), flushed so callers can render it."""
    row = delivery_row(event, endpoint_id, now=func.now(), held=held, is_test=is_test, retry_of=retry_of)
    delivery = WebhookDelivery(**row)
    if delivery.next_attempt_at is not None:
        notify_due(session)
    session.add(delivery)
    session.flush()
    return delivery


# Built once: building the statements costs more than running them on the consumer's path.
_EVENT_COLUMNS: dict[str, TypeEngine[Any]] = {
    "id": Uuid(),
    "organization_id": Uuid(),
    "event_type": String(),
    "occurred_at": DateTime(timezone=True),
    "body": Text(),
    "body_bytes": Integer(),
    "request_id": String(),
}
_EVENTS_TABLE = Base.metadata.tables[WebhookEvent.__tablename__]
_EVENT_ROWS = unnested("event", _EVENT_COLUMNS)
_INSERT_EVENTS = (
    insert(_EVENTS_TABLE)
    .from_select(list(_EVENT_COLUMNS), select(*_EVENT_ROWS.c))
    .on_conflict_do_nothing(index_elements=["id"])
    .returning(_EVENTS_TABLE.c.id)
)

# The events stored and their organizations' endpoints (not DISABLED), by event id then endpoint id,
# in one statement: the insert is a data-modifying CTE whose RETURNING only has the rows it inserted.
_STORED = (
    insert(_EVENTS_TABLE)
    .from_select(list(_EVENT_COLUMNS), select(*_EVENT_ROWS.c))
    .on_conflict_do_nothing(index_elements=["id"])
    .returning(_EVENTS_TABLE.c.id, _EVENTS_TABLE.c.organization_id)
    .cte("stored")
)
_STORE_EVENTS_WITH_SUBSCRIBERS = (
    select(
        _STORED.c.id.label("event_id"),
        WebhookEndpoint.id,
        WebhookEndpoint.status,
        WebhookEndpoint.event_types,
        WebhookEndpoint.url,
        WebhookEndpoint.secret_sealed,
        WebhookEndpoint.rate_limit_per_second,  # the throttle of the deliveries handed over
    )
    .join_from(
        _STORED,
        WebhookEndpoint,
        (WebhookEndpoint.organization_id == _STORED.c.organization_id) & (WebhookEndpoint.status != "DISABLED"),
    )
    .order_by(_STORED.c.id, WebhookEndpoint.id)
)

# ``delivery_row``'s ``now`` in a batch, which stores its times as offsets from the statement's now()
_NO_OFFSET = timedelta(0)
_STORE_SQL = driver_sql(_STORE_EVENTS_WITH_SUBSCRIBERS)
_INSERT_DELIVERIES_SQL = driver_sql(INSERT_DELIVERIES)
_NOTIFY_DUE_SQL = driver_sql(select(func.pg_notify(DELIVERIES.channel, "")))
