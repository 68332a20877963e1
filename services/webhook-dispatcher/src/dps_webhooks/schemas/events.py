"""The dispatcher's event catalogue: the one event type it makes itself (customers' events are the
api's and the connector's, which document them)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from dps_common.events.catalogue import EventCatalogue, EventType

from dps_webhooks.domain.endpoint_views import EndpointView
from dps_webhooks.schemas import ResponseModel

TEST_EVENT_TYPE = "webhook.test"
TEST_MESSAGE = "A test delivery from the Deal Pricing Service."


class TestEventData(ResponseModel):
    webhookConfigId: str = Field(description="The endpoint the test was sent to.")
    message: str


EVENTS = EventCatalogue([
    EventType(TEST_EVENT_TYPE, "A test delivery (POST /webhook-configs/{id}/test); sent even when the endpoint "
              "is PAUSED and whatever its eventTypes.", TestEventData),
])


def render_test_event(endpoint: EndpointView) -> dict[str, Any]:
    """The data of a test delivery's event (``TestEventData``), for the endpoint it is sent to."""
    return {"webhookConfigId": str(endpoint.id), "message": TEST_MESSAGE}
