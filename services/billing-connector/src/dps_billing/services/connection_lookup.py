"""The organization's connection row: found (locked when asked) or the problem its absence or
breakage answers, and its view (never a token)."""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.errors import Conflict, NotFound

from dps_billing.db.models import BillingConnection
from dps_billing.domain.connection_views import ConnectionView


def connection_view(connection: BillingConnection) -> ConnectionView:
    return ConnectionView(
        id=connection.id,
        status=connection.status,
        account_id=connection.account_id,
        livemode=connection.livemode,
        connected_by=connection.connected_by,
        connected_at=connection.connected_at,
        broken_reason=connection.broken_reason,
        updated_at=connection.updated_at,
    )


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
