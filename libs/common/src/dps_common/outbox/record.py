"""Writing events: into the outbox, inside the caller's transaction, so a change and its event
commit together or not at all.

Every write of a service records events, so this is its cost per event: one INSERT, built once, run
on the session's connection (no ORM object, no flush). The relays are woken by the table's statement
trigger (``dps_common.outbox.migration``), which notifies ``OUTBOX_CHANNEL`` for every writer of the
outbox; the notification is delivered at commit, never for a rolled-back change.

The row keeps the current request id (``dps_common.request_id``: the HTTP request that caused the
event), which the relay publishes as the message header ``X-Request-Id``, never in the envelope."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import insert
from sqlalchemy.orm import Session

from dps_common import request_id
from dps_common.events.envelope import envelope
from dps_common.ids import new_id
from dps_common.outbox.table import OUTBOX

_INSERT_EVENT = insert(OUTBOX)  # Core, not ORM: runs as is, with nothing to flush


def record_event(session: Session, event_type: str, organization_id: UUID, data: dict[str, Any], now: datetime) -> UUID:
    event_id = new_id()
    session.connection().execute(
        _INSERT_EVENT,
        {
            "id": event_id,
            "organization_id": organization_id,
            "event_type": event_type,
            "occurred_at": now,
            "envelope": envelope(event_type, organization_id, data, event_id=event_id, occurred_at=now),
            "request_id": request_id.current(),
        },
    )
    return event_id
