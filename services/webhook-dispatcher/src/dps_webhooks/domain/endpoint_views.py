"""Webhook endpoints as their use cases return them (never the sealed secret): plain values, no rows,
no JSON. ``dps_webhooks.schemas.webhook_configs`` renders them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True, slots=True)
class EndpointView:
    id: UUID
    url: str
    description: str
    event_types: tuple[str, ...]  # empty: every event type
    status: str
    consecutive_failures: int
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime
    secret_rotated_at: datetime | None
    revoked_at: datetime | None
    rate_limit_per_second: int | None = None  # None: no limit


@dataclass(frozen=True, slots=True)
class EndpointWithSecret:
    """An endpoint with its new signing secret: the answer of create and rotate, and only theirs."""

    endpoint: EndpointView
    secret: str
