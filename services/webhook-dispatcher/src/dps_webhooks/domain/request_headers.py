"""The headers of one attempt's request (Standard Webhooks plus the spec's ``X-Service-*``), from the
values it was signed with: the sender sends them, and the delivery view shows them exactly as sent
(each attempt keeps its ``webhook-timestamp`` and ``webhook-signature``)."""

from __future__ import annotations

from uuid import UUID

USER_AGENT = "DealPricingService-Webhooks/1.0"


def request_headers(*, event_id: UUID, delivery_id: UUID, attempt: int, timestamp: int, signature: str) -> dict[str, str]:
    message_id = str(event_id)
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
        "X-Service-Event-Id": message_id,
        "X-Service-Delivery-Id": str(delivery_id),
        "X-Service-Attempt": str(attempt),
    }
