"""The dispatcher's one event of its own is in its catalogue, as its events adapter renders it."""

from datetime import UTC, datetime
from uuid import uuid4

from dps_common.json import loads
from dps_testing.events import assert_documented_event

from dps_webhooks.adapters.events import webhook_test_envelope
from dps_webhooks.domain.endpoint_views import EndpointView
from dps_webhooks.schemas.events import EVENTS, TEST_EVENT_TYPE


def test_the_test_event_is_declared_with_the_data_it_carries():
    now = datetime.now(UTC)
    endpoint = EndpointView(uuid4(), "https://hooks.example/x", "", (), "ACTIVE", 0, None, now, now, None, None)
    body = loads(webhook_test_envelope(uuid4(), endpoint, now))
    assert body["type"] == TEST_EVENT_TYPE and body["data"]["webhookConfigId"] == str(endpoint.id)
    assert_documented_event(EVENTS, body)
