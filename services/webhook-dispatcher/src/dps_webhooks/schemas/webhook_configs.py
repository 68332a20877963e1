"""Bodies of ``/webhook-configs``: the endpoint record, create and update requests, and the answer
that carries the signing secret (create and rotate only)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import MISSING, AfterValidator, Field, StringConstraints

from dps_common.events.envelope import INTERNAL_PREFIX, is_internal
from dps_common.openapi.examples import example

from dps_webhooks.domain.endpoint_views import EndpointView, EndpointWithSecret
from dps_webhooks.domain.event_types import known_event_types, unknown_event_type_message
from dps_webhooks.schemas import RequestModel, ResponseModel

EndpointStatus = Literal["ACTIVE", "PAUSED", "DISABLED"]
MAX_EVENT_TYPES = 100


def _unique(names: list[str]) -> list[str]:
    """Repeats are dropped, first occurrence kept (a set, written as a list)."""
    return list(dict.fromkeys(names))


WebhookUrl = Annotated[
    str,
    StringConstraints(min_length=1, max_length=2048, pattern=r"^[^\x00]*$"),
    Field(
        description="Receiver address: https, no credentials, a host that resolves only to public addresses. "
        "Checked here and again before every attempt.",
        examples=["https://hooks.example.com/dps"],
    ),
]
Description = Annotated[str, StringConstraints(max_length=500, pattern=r"^[^\x00]*$")]
MAX_RATE_LIMIT_PER_SECOND = 1000
RateLimitPerSecond = Annotated[
    int | None,
    Field(
        ge=1,
        le=MAX_RATE_LIMIT_PER_SECOND,
        description="The most requests a second this endpoint is sent, by every worker together (1 to 1000); "
        "null: no limit. Deliveries beyond it wait for their turn: they do not fail and it costs them no "
        "attempt. They are paced a tenth below it (at 5: one every 0.22 s), so that the receiver, whose "
        "requests arrive a little early or late, never counts more than this in any one second.",
        examples=[5],
    ),
]


def _deliverable(name: str) -> str:
    if is_internal(name):
        raise ValueError(f"{INTERNAL_PREFIX}* events are the services' own and are never delivered to endpoints")
    if name not in known_event_types():
        raise ValueError(unknown_event_type_message(name))
    return name


EventType = Annotated[
    str,
    StringConstraints(max_length=64),
    Field(
        examples=["quote.approved"],
        description="One of the event types of GET /webhook-event-types.",
        json_schema_extra={"enum": list(known_event_types())},
    ),
    AfterValidator(_deliverable),
]
EventTypes = Annotated[
    list[EventType],
    Field(
        max_length=MAX_EVENT_TYPES,
        description="Event type names delivered to this endpoint; empty means every event type. "
        "Test deliveries are sent whatever the list holds.",
    ),
    AfterValidator(_unique),
]


class WebhookConfigCreate(RequestModel):
    model_config = example({"url": "https://hooks.example.com/deal-pricing", "description": "CRM sync",
                            "eventTypes": ["quote.approved", "billing.quote_pushed"], "rateLimitPerSecond": 5})
    url: WebhookUrl
    description: Description = ""
    eventTypes: EventTypes = Field(default_factory=list)
    rateLimitPerSecond: RateLimitPerSecond = None


class WebhookConfigUpdate(RequestModel):
    """Only the fields sent change; a field sent as null is a 400, but rateLimitPerSecond, which null
    clears (no limit). Setting status ACTIVE always
    clears consecutiveFailures and disabledReason (and re-enables a DISABLED endpoint); PAUSED holds
    deliveries until ACTIVE again; DISABLED cannot be set (revoke with DELETE). A revoked endpoint
    cannot be changed (409)."""

    model_config = example({"status": "PAUSED"})
    # MISSING: not sent (left as it is); null is refused like any other wrong type.
    url: WebhookUrl | MISSING = MISSING
    description: Description | MISSING = MISSING
    eventTypes: EventTypes | MISSING = MISSING
    status: EndpointStatus | MISSING = MISSING
    rateLimitPerSecond: RateLimitPerSecond | MISSING = MISSING


_ENDPOINT = {
    "id": "0192a3b4-c5d6-7e8f-9a0b-9c1d2e3f4a5b", "url": "https://hooks.initech.example/deal-pricing",
    "description": "Quote approvals to the ERP", "eventTypes": ["quote.approved", "quote.rejected"],
    "status": "ACTIVE", "consecutiveFailures": 0, "disabledReason": None, "createdAt": "2026-10-01T12:00:00Z",
    "updatedAt": "2026-10-01T12:00:00Z", "secretRotatedAt": None, "revokedAt": None, "rateLimitPerSecond": 5,
}


class WebhookConfig(ResponseModel):
    model_config = example(_ENDPOINT)
    id: str
    url: str
    description: str
    eventTypes: list[str] = Field(description="Empty: every event type.")
    status: EndpointStatus
    consecutiveFailures: int = Field(
        description="Consecutive failed deliveries (an exhausted delivery counts once); a success resets it."
    )
    disabledReason: str | None = Field(description="Why the endpoint is DISABLED; null otherwise.")
    createdAt: datetime
    updatedAt: datetime
    secretRotatedAt: datetime | None
    revokedAt: datetime | None = Field(description="Set by DELETE; a revoked endpoint stays DISABLED for good.")
    rateLimitPerSecond: int | None = Field(
        description="The most requests a second this endpoint is sent (1 to 1000); null: no limit.", examples=[5]
    )


class WebhookConfigWithSecret(WebhookConfig):
    model_config = example({**_ENDPOINT, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
    secret: str = Field(
        description="The whsec_ signing secret (Standard Webhooks). Shown only in this answer: store it now.",
        examples=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    )


class WebhookConfigList(ResponseModel):
    webhookConfigs: list[WebhookConfig]
    nextCursor: str | None


def render_endpoint(endpoint: EndpointView) -> dict[str, Any]:
    """The endpoint record; never the secret."""
    return {
        "id": str(endpoint.id),
        "url": endpoint.url,
        "description": endpoint.description,
        "eventTypes": list(endpoint.event_types),
        "status": endpoint.status,
        "consecutiveFailures": endpoint.consecutive_failures,
        "disabledReason": endpoint.disabled_reason,
        "createdAt": endpoint.created_at,
        "updatedAt": endpoint.updated_at,
        "secretRotatedAt": endpoint.secret_rotated_at,
        "revokedAt": endpoint.revoked_at,
        "rateLimitPerSecond": endpoint.rate_limit_per_second,
    }


def render_endpoint_with_secret(issued: EndpointWithSecret) -> dict[str, Any]:
    return {**render_endpoint(issued.endpoint), "secret": issued.secret}
