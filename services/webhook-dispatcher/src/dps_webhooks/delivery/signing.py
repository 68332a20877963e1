"""The headers of one attempt: Standard Webhooks signing plus the spec's ``X-Service-*`` headers.

Signed anew on every attempt (a fresh timestamp, and the endpoint's secret as it is now: a rotation
applies from the next attempt on, with no overlap).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from uuid import UUID

from standardwebhooks import Webhook

USER_AGENT = "DealPricingService-Webhooks/1.0"


def delivery_headers(
    *, secret: str, event_id: UUID, delivery_id: UUID, attempt: int, body: str, now: datetime | None = None
) -> dict[str, str]:
    timestamp = now or datetime.now(UTC)
    message_id = str(event_id)
    signature = _signer(secret).sign(msg_id=message_id, timestamp=timestamp, data=body)
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signature,
        "X-Service-Event-Id": message_id,
        "X-Service-Delivery-Id": str(delivery_id),
        "X-Service-Attempt": str(attempt),
    }


@lru_cache(maxsize=1024)
def _signer(secret: str) -> Webhook:
    return Webhook(secret)  # decodes the secret: once per secret, not per attempt
