"""The dispatcher's event catalogue (GET /webhook-event-types), kept a few minutes per process: it
changes only with a deployment, and the endpoint form needs it beside the endpoint it edits (one
call per service per page)."""

from __future__ import annotations

import threading
import time
from typing import Any

from dps_console.services.ports import ServiceApi

TTL_SECONDS = 300.0


class EventCatalogue:
    def __init__(self, webhooks: ServiceApi, ttl: float = TTL_SECONDS):
        self._webhooks = webhooks
        self._ttl = ttl
        self._lock = threading.Lock()
        self._types: list[dict[str, Any]] | None = None
        self._at = 0.0

    def types(self, credential: str) -> list[dict[str, Any]]:
        with self._lock:
            if self._types is not None and time.monotonic() - self._at < self._ttl:
                return self._types
        answer = self._webhooks.call("GET", "/webhook-event-types", credential)
        types = [t for t in (answer or {}).get("eventTypes", []) if isinstance(t, dict)]
        with self._lock:
            self._types, self._at = types, time.monotonic()
        return types
