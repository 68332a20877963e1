"""A push as a worker holds it once claimed: the snapshot it plans from, when it first planned, how
many claims it took, and the claim's token (only that token may renew the lease or finish the push)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID


@dataclass(frozen=True)
class ClaimedPush:
    push_id: UUID
    organization_id: UUID
    quote_id: UUID
    snapshot: dict[str, Any]
    planned_at: datetime
    claims: int
    token: UUID
    request_id: str | None = None  # of the request that queued the push: bound while it runs
