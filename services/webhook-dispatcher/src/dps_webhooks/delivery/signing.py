"""The headers of one attempt: Standard Webhooks signing plus the spec's ``X-Service-*`` headers.

Signed anew on every attempt (a fresh timestamp, and the endpoint's secret as it is now: a rotation
applies from the next attempt on, with no overlap).
"""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

from standardwebhooks import Webhook

USER_AGENT = "DealPricingService-Webhooks/1.0"


def delivery_headers(
    *, secret: str, event_id: UUID, delivery_id: UUID, attempt: int, body: str, now: datetime | None = None
) -> dict[str, str]:
    timestamp = now or datetime.now(UTC)
    signature = Webhook(secret).sign(msg_id=str(event_id), timestamp=timestamp, data=body)
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": str(event_id),
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signature,
        "X-Service-Event-Id": str(event_id),
        "X-Service-Delivery-Id": str(delivery_id),
        "X-Service-Attempt": str(attempt),
    }
