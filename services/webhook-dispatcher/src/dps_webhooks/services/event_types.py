"""The event catalogue endpoints subscribe from (read only; no transaction: it is the dispatcher's data)."""

from __future__ import annotations

from typing import Any

from dps_webhooks.domain.event_types import catalogue


def list_event_types() -> tuple[dict[str, Any], ...]:
    return catalogue()
