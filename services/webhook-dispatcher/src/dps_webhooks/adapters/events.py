"""The one place the dispatcher's own events are rendered: a use case hands over the view its event
is about (``services/deliveries.py``, the test delivery's endpoint) and gets the envelope, its data
rendered by the schema the catalogue declares (``schemas/events.py``), serialized as it will be
stored, signed and sent."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from dps_common.events.envelope import envelope
from dps_common.json import dumps

from dps_webhooks.domain.endpoint_views import EndpointView
from dps_webhooks.schemas.events import TEST_EVENT_TYPE, render_test_event


def webhook_test_envelope(organization_id: UUID, endpoint: EndpointView, occurred_at: datetime) -> str:
    """A ``webhook.test`` event for ``endpoint``."""
    return dumps(envelope(TEST_EVENT_TYPE, organization_id, render_test_event(endpoint), occurred_at=occurred_at)).decode()
