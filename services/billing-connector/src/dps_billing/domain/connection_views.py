"""The billing connection as its use cases read it (never a token): plain values, no rows, no JSON.

``dps_billing.schemas.connection.render_connection`` renders it, for the API and the
``billing.connection.*`` events.
"""

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
