"""The answer of ``GET /webhook-event-types``: the catalogue of event types an endpoint can subscribe to."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from dps_webhooks.schemas import ResponseModel


class WebhookEventType(ResponseModel):
    type: str = Field(description="The name to put in a webhook config's eventTypes.", examples=["quote.approved"])
    description: str
    schema_: dict[str, Any] = Field(
        alias="schema",
        description="JSON Schema (2020-12, self-contained: components under $defs) of the payload an endpoint "
        "receives: the event envelope with this type's data.",
    )
    example: dict[str, Any] = Field(description="A realistic payload of this type, valid under its schema.")


class WebhookEventTypeList(ResponseModel):
    eventTypes: list[WebhookEventType] = Field(
        description="Every event type delivered to endpoints, by name. Not paged: the catalogue is small. "
        "Test deliveries (webhook.test) are sent whatever an endpoint subscribes to and are not listed."
    )


def render_event_types(entries: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The catalogue's entries as stored (``{"type", "description", "schema", "example"}``)."""
    return {"eventTypes": [dict(entry) for entry in entries]}
