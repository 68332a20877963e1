"""The connection record as the API and the ``billing.connection.*`` events show it (never a token),
and the lookups and outbox writes the connection's use cases share."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.errors import Conflict, NotFound
from dps_common.outbox import record_event

from dps_billing.db.models import BillingConnection

WHAT = "Billing connection"
CONNECTED = "billing.connection.connected"
REMOVED = "billing.connection.removed"
BROKEN = "billing.connection.broken"


def render_connection(connection: BillingConnection) -> dict[str, Any]:
    return {
        "id": str(connection.id),
        "status": connection.status,
        "accountId": connection.account_id,
        "livemode": connection.livemode,
        "mode": "live" if connection.livemode else "test",
        "connectedBy": str(connection.connected_by),
        "connectedAt": connection.connected_at,
        "brokenReason": connection.broken_reason,
        "updatedAt": connection.updated_at,
    }


def find_connection(session: Session, organization_id: UUID, *, lock: bool = False) -> BillingConnection | None:
    stmt = select(BillingConnection).where(BillingConnection.organization_id == organization_id)
    return session.scalar(stmt.with_for_update() if lock else stmt)


def load_connection(session: Session, organization_id: UUID, *, lock: bool = False) -> BillingConnection:
    connection = find_connection(session, organization_id, lock=lock)
    if connection is None:
        raise not_connected()
    return connection


def not_connected() -> NotFound:
    return NotFound(
        "No billing platform is connected; an admin connects one with POST /billing-connection/authorize.",
        code="billing_not_connected",
    )


def not_connected_conflict() -> Conflict:
    return Conflict(
        "No billing platform is connected to this organization; an admin connects one first "
        "(POST /billing-connection/authorize).",
        code="billing_not_connected",
    )


def broken_conflict(reason: str | None) -> Conflict:
    return Conflict(
        f"The billing platform connection is broken ({reason or 'its grant was revoked'}); an admin connects "
        "it again (POST /billing-connection/authorize).",
        code="billing_connection_broken",
    )


def record_connected(session: Session, connection: BillingConnection, now: datetime) -> None:
    session.flush()
    record_event(session, CONNECTED, connection.organization_id, render_connection(connection), now)


def record_broken(session: Session, connection: BillingConnection, now: datetime) -> None:
    session.flush()
    record_event(session, BROKEN, connection.organization_id, render_connection(connection), now)


def record_removed(session: Session, connection: BillingConnection, removed_by: str, now: datetime) -> None:
    """``removed_by``: ``service`` (DELETE /billing-connection, or replaced by a new connection) or
    ``platform`` (the app was removed there)."""
    data = {**render_connection(connection), "status": "removed", "removedBy": removed_by, "removedAt": now}
    record_event(session, REMOVED, connection.organization_id, data, now)
