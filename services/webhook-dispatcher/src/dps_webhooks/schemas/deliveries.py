"""Bodies of ``/webhook-configs/{id}/deliveries``: the delivery record (spec section 2) and its attempts."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from dps_webhooks.schemas import ResponseModel

DeliveryStatus = Literal["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"]


class Delivery(ResponseModel):
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
    attempts: list[DeliveryAttempt] = Field(description="In attempt order.")


class DeliveryList(ResponseModel):
    deliveries: list[Delivery]
    nextCursor: str | None
