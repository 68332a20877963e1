"""The ``billing.connection.*`` events, recorded through the outbox in the transaction of their
change: each with the connection's view (never a token), which the outbox adapter renders."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from dps_billing.db.models import BillingConnection
from dps_billing.domain.connection_views import RemovedConnection
from dps_billing.domain.events import RecordedEvent
from dps_billing.services.connection_lookup import connection_view
from dps_billing.services.ports import Outbox

CONNECTED = "billing.connection.connected"
REMOVED = "billing.connection.removed"
BROKEN = "billing.connection.broken"


def record_connected(outbox: Outbox, session: Session, connection: BillingConnection, now: datetime) -> RecordedEvent:
    session.flush()
    return outbox.record(session, CONNECTED, connection.organization_id, connection_view(connection), now)


def record_broken(outbox: Outbox, session: Session, connection: BillingConnection, now: datetime) -> RecordedEvent:
    session.flush()
    return outbox.record(session, BROKEN, connection.organization_id, connection_view(connection), now)


def record_removed(outbox: Outbox, session: Session, connection: BillingConnection, removed_by: str,
                   now: datetime) -> RecordedEvent:
    """``removed_by``: ``service`` (DELETE /billing-connection, or replaced by a new connection) or
    ``platform`` (the app was removed there)."""
    removed = RemovedConnection(connection_view(connection), removed_by, now)
    return outbox.record(session, REMOVED, connection.organization_id, removed, now)
