"""The billing connection as its use cases read it (never a token), and the start link of a connect
flow: plain values, no rows, no JSON. ``dps_billing.schemas.connection`` renders them (the connection
for the API and the ``billing.connection.*`` events, a removed one for ``billing.connection.removed``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True, slots=True)
class ConnectionView:
    id: UUID
    status: str
    account_id: str
    livemode: bool
    connected_by: UUID
    connected_at: datetime
    broken_reason: str | None
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class StartLink:
    """Where the admin's browser starts a connect flow (once, before ``expires_at``)."""

    start_url: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class RemovedConnection:
    """The subject of ``billing.connection.removed``: the connection as it was, and who removed it when
    (``service``: DELETE /billing-connection, or replaced by a new connection; ``platform``: the app
    was removed there)."""

    connection: ConnectionView
    removed_by: str
    removed_at: datetime
