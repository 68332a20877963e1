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


class DeliveryDetail(Delivery):
    model_config = example({**_DELIVERY, "attempts": [
        {"attempt": 1, "attemptedAt": "2026-11-02T10:00:01Z", "responseStatus": 503, "responseExcerpt": "busy",
         "errorMessage": "HTTP 503", "durationMs": 120},
        {"attempt": 2, "attemptedAt": "2026-11-02T10:00:31Z", "responseStatus": 200, "responseExcerpt": "ok",
         "errorMessage": None, "durationMs": 84},
    ]})
    attempts: list[DeliveryAttempt] = Field(description="In attempt order.")


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
    }


def render_delivery_detail(detail: DeliveryWithAttempts) -> dict[str, Any]:
    return {**render_delivery(detail.delivery), "attempts": [_render_attempt(a) for a in detail.attempts]}
