"""The event envelope every service publishes and consumes (``X-Service-Event-Id`` is its ``id``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from dps_common.ids import new_id

ENVELOPE_VERSION = 1


def envelope(
    event_type: str,
    organization_id: UUID,
    data: dict[str, Any],
    *,
    event_id: UUID | None = None,
    occurred_at: datetime | None = None,
) -> dict[str, Any]:
    return {
        "id": str(event_id or new_id()),
        "type": event_type,
        "version": ENVELOPE_VERSION,
        "occurredAt": (occurred_at or datetime.now(UTC)).isoformat().replace("+00:00", "Z"),
        "organizationId": str(organization_id),
        "data": data,
    }


INTERNAL_PREFIX = "internal."


def is_internal(event_type: str) -> bool:
    """Events the services tell each other (``internal.*``, e.g. a revoked API key): never delivered
    to customers' webhooks."""
    return event_type.startswith(INTERNAL_PREFIX)
