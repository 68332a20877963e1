"""The ``billing.connection.*`` events, written to the outbox in the transaction of their change."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from dps_common.outbox import record_event

from dps_billing.db.models import BillingConnection
from dps_billing.schemas.connection import render_connection
from dps_billing.services.connection_lookup import connection_view

CONNECTED = "billing.connection.connected"
REMOVED = "billing.connection.removed"
BROKEN = "billing.connection.broken"


def record_connected(session: Session, connection: BillingConnection, now: datetime) -> None:
    session.flush()
    record_event(session, CONNECTED, connection.organization_id, render_connection(connection_view(connection)), now)


def record_broken(session: Session, connection: BillingConnection, now: datetime) -> None:
    session.flush()
    record_event(session, BROKEN, connection.organization_id, render_connection(connection_view(connection)), now)


def record_removed(session: Session, connection: BillingConnection, removed_by: str, now: datetime) -> None:
    """``removed_by``: ``service`` (DELETE /billing-connection, or replaced by a new connection) or
    ``platform`` (the app was removed there)."""
    data = {**render_connection(connection_view(connection)), "status": "removed", "removedBy": removed_by,
            "removedAt": now}
    record_event(session, REMOVED, connection.organization_id, data, now)
