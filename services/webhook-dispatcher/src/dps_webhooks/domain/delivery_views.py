"""Deliveries and their attempts as the delivery use cases return them: plain values, no rows, no
JSON. ``dps_webhooks.schemas.deliveries`` renders them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True, slots=True)
class DeliveryView:
    id: UUID
    endpoint_id: UUID
    event_id: UUID
    event_type: str
    status: str
    attempt_count: int
    is_test: bool
    retry_of: UUID | None  # the delivery a manual retry redelivers
    created_at: datetime
    completed_at: datetime | None
    last_response_status: int | None
    last_response_excerpt: str | None
    last_error_message: str | None
    last_duration_ms: int | None
    last_attempted_at: datetime | None
    next_attempt_at: datetime | None


@dataclass(frozen=True, slots=True)
class AttemptView:
    attempt: int
    attempted_at: datetime
    response_status: int | None
    response_excerpt: str | None
    error_message: str | None
    duration_ms: int
    # the request's headers exactly as sent on this attempt; None for attempts recorded without
    # their signing (before the attempts kept it)
    request_headers: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class SentRequest:
    """The request every attempt of a delivery sends: the endpoint's URL now, and the event's body
    (the same bytes each attempt signed; None when it was over the payload limit and not kept)."""

    url: str
    body: str | None
    method: str = "POST"


@dataclass(frozen=True, slots=True)
class DeliveryWithAttempts:
    """A delivery with its attempts, in attempt order, and the request they sent."""

    delivery: DeliveryView
    attempts: tuple[AttemptView, ...]
    request: SentRequest
