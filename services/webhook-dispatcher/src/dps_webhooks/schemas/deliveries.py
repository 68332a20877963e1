"""Bodies of ``/webhook-configs/{id}/deliveries``: the delivery record (spec section 2) and its attempts."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from dps_common.openapi.examples import example

from dps_webhooks.domain.delivery_views import AttemptView, DeliveryView, DeliveryWithAttempts
from dps_webhooks.schemas import ResponseModel

DeliveryStatus = Literal["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"]


_DELIVERY = {
    "id": "0192a3b4-c5d6-7e8f-9a0b-ad1e2f3a4b5c", "webhookConfigId": "0192a3b4-c5d6-7e8f-9a0b-9c1d2e3f4a5b",
    "eventId": "0192a3b4-c5d6-7e8f-9a0b-be1f2a3b4c5d", "eventType": "quote.approved", "status": "SUCCESS",
    "attemptCount": 2, "isTest": False, "retryOf": None, "createdAt": "2026-11-02T10:00:00Z",
    "completedAt": "2026-11-02T10:00:31Z", "lastResponseStatus": 200, "lastResponseExcerpt": "ok",
    "lastErrorMessage": None, "lastDurationMs": 84, "lastAttemptedAt": "2026-11-02T10:00:31Z", "nextAttemptAt": None,
}


class Delivery(ResponseModel):
    model_config = example(_DELIVERY)
    id: str = Field(description="X-Service-Delivery-Id of its attempts; differs per delivery.")
    webhookConfigId: str
    eventId: str = Field(description="X-Service-Event-Id; the same on every delivery of the event.")
    eventType: str
    status: DeliveryStatus
    attemptCount: int
    isTest: bool = Field(description="A test delivery (POST /webhook-configs/{id}/test), or a retry of one.")
    retryOf: str | None = Field(description="The delivery this one manually redelivers.")
    createdAt: datetime
    completedAt: datetime | None = Field(description="When it became SUCCESS or EXHAUSTED.")
    lastResponseStatus: int | None = Field(description="HTTP status of the last attempt.")
    lastResponseExcerpt: str | None = Field(description="Beginning of the receiver's last response body.")
    lastErrorMessage: str | None = Field(description="Error text of the last failed attempt.")
    lastDurationMs: int | None = Field(description="Duration of the last attempt in milliseconds.")
    lastAttemptedAt: datetime | None = Field(description="Time of the last attempt.")
    nextAttemptAt: datetime | None = Field(
        description="Time of the next scheduled attempt; null when final, or held while the endpoint is "
        "PAUSED or DISABLED."
    )


class DeliveryAttempt(BaseModel):
    attempt: int = Field(description="1 for the first attempt (X-Service-Attempt).")
    attemptedAt: datetime
    responseStatus: int | None
    responseExcerpt: str | None
    errorMessage: str | None
    durationMs: int
    requestHeaders: dict[str, str] | None = Field(
        description="The request's headers exactly as sent on this attempt, its webhook-timestamp and "
        "webhook-signature included (a later secret rotation changes nothing here); null for an attempt "
        "recorded before they were kept."
    )


class DeliveryRequest(BaseModel):
    method: Literal["POST"]
    url: str = Field(description="The webhook config's URL now (it may have changed since an attempt).")
    body: str | None = Field(
        description="The body exactly as every attempt sent and signed it; null when the payload was over "
        "1 MB (not kept, never sent)."
    )


def _headers(attempt: int, timestamp: int, signature: str) -> dict[str, str]:
    event_id, delivery_id = str(_DELIVERY["eventId"]), str(_DELIVERY["id"])
    return {
        "Content-Type": "application/json", "User-Agent": "DealPricingService-Webhooks/1.0",
        "webhook-id": event_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature,
        "X-Service-Event-Id": event_id, "X-Service-Delivery-Id": delivery_id, "X-Service-Attempt": str(attempt),
    }  # fmt: skip


class DeliveryDetail(Delivery):
    model_config = example({**_DELIVERY, "attempts": [
        {"attempt": 1, "attemptedAt": "2026-11-02T10:00:01Z", "responseStatus": 503, "responseExcerpt": "busy",
         "errorMessage": "The receiver answered 503; only 2xx counts as delivered.", "durationMs": 120,
         "requestHeaders": _headers(1, 1793613601, "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=")},
        {"attempt": 2, "attemptedAt": "2026-11-02T10:00:31Z", "responseStatus": 200, "responseExcerpt": "ok",
         "errorMessage": None, "durationMs": 84,
         "requestHeaders": _headers(2, 1793613631, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")},
    ], "request": {
        "method": "POST", "url": "https://erp.example.com/hooks/deal-pricing",
        "body": '{"id":"0192a3b4-c5d6-7e8f-9a0b-be1f2a3b4c5d","type":"quote.approved",'
                '"occurredAt":"2026-11-02T10:00:00Z","organizationId":"0192a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b",'
                '"data":{"quoteId":"0192a3b4-c5d6-7e8f-9a0b-0c1d2e3f4a5b"}}',
    }})  # fmt: skip
    attempts: list[DeliveryAttempt] = Field(description="In attempt order.")
    request: DeliveryRequest = Field(description="The request every attempt sent (each attempt's headers are its own).")


class DeliveryList(ResponseModel):
    deliveries: list[Delivery]
    nextCursor: str | None


def render_delivery(delivery: DeliveryView) -> dict[str, Any]:
    return {
        "id": str(delivery.id),
        "webhookConfigId": str(delivery.endpoint_id),
        "eventId": str(delivery.event_id),
        "eventType": delivery.event_type,
        "status": delivery.status,
        "attemptCount": delivery.attempt_count,
        "isTest": delivery.is_test,
        "retryOf": str(delivery.retry_of) if delivery.retry_of else None,
        "createdAt": delivery.created_at,
        "completedAt": delivery.completed_at,
        "lastResponseStatus": delivery.last_response_status,
        "lastResponseExcerpt": delivery.last_response_excerpt,
        "lastErrorMessage": delivery.last_error_message,
        "lastDurationMs": delivery.last_duration_ms,
        "lastAttemptedAt": delivery.last_attempted_at,
        "nextAttemptAt": delivery.next_attempt_at,
    }


def _render_attempt(attempt: AttemptView) -> dict[str, Any]:
    return {
        "attempt": attempt.attempt,
        "attemptedAt": attempt.attempted_at,
        "responseStatus": attempt.response_status,
        "responseExcerpt": attempt.response_excerpt,
        "errorMessage": attempt.error_message,
        "durationMs": attempt.duration_ms,
        "requestHeaders": attempt.request_headers,
    }


def render_delivery_detail(detail: DeliveryWithAttempts) -> dict[str, Any]:
    request = detail.request
    return {
        **render_delivery(detail.delivery),
        "attempts": [_render_attempt(a) for a in detail.attempts],
        "request": {"method": request.method, "url": request.url, "body": request.body},
    }
