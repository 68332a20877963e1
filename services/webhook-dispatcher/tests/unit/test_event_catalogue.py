"""The dispatcher's one event of its own is in its catalogue, as it is written."""

from datetime import UTC, datetime
from uuid import uuid4

from dps_common.events.envelope import envelope
from dps_testing.events import assert_documented_event

from dps_webhooks.schemas.events import EVENTS
from dps_webhooks.services.deliveries import TEST_EVENT_TYPE, TEST_MESSAGE


def test_the_test_event_is_declared_with_the_data_it_carries():
    body = envelope(TEST_EVENT_TYPE, uuid4(), {"webhookConfigId": str(uuid4()), "message": TEST_MESSAGE},
                    occurred_at=datetime.now(UTC))
    assert_documented_event(EVENTS, body)
