"""A claimed delivery, as the work queue hands it to an attempt (``db/deliveries.py``): plain values."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID


@dataclass(frozen=True)
class Claimed:
    """One claimed delivery: everything its attempt needs."""

    delivery_id: UUID
    endpoint_id: UUID
    event_id: UUID
    attempt: int
    is_test: bool
    url: str
    secret_sealed: bytes
    body: str
    token: UUID
    request_id: str | None = None  # the event's: the request that caused it, for the attempt's log lines
    rate_limit_per_second: int | None = None  # the endpoint's, read with the claim: the throttle's rate (None: none)

    def log_fields(self) -> dict[str, object]:
        """The delivery's identifiers, and the request that caused its event (``requestId``): the
        delivery loop writes the lines of many deliveries, so each line names its own."""
        fields: dict[str, object] = {
            "deliveryId": str(self.delivery_id),
            "eventId": str(self.event_id),
            "endpointId": str(self.endpoint_id),
            "attempt": self.attempt,
        }
        if self.request_id is not None:
            fields["requestId"] = self.request_id
        return fields
