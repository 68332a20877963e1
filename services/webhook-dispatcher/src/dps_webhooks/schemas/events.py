"""The dispatcher's event catalogue: the one event type it makes itself (customers' events are the
api's and the connector's, which document them)."""

from __future__ import annotations

from pydantic import Field

from dps_common.events.catalogue import EventCatalogue, EventType

from dps_webhooks.schemas import ResponseModel


class TestEventData(ResponseModel):
    webhookConfigId: str = Field(description="The endpoint the test was sent to.")
    message: str


EVENTS = EventCatalogue([
    EventType("webhook.test", "A test delivery (POST /webhook-configs/{id}/test); sent even when the endpoint "
              "is PAUSED and whatever its eventTypes.", TestEventData),
])
