"""Every table of the dispatcher; importing this registers them all on the metadata."""

from dps_webhooks.db.models import idempotency  # noqa: F401  (the shared idempotency_keys table)
from dps_webhooks.db.models.deliveries import DeliveryAttempt, WebhookDelivery
from dps_webhooks.db.models.endpoint_hours import EndpointHour
from dps_webhooks.db.models.endpoints import WebhookEndpoint
from dps_webhooks.db.models.events import WebhookEvent

__all__ = ["DeliveryAttempt", "EndpointHour", "WebhookDelivery", "WebhookEndpoint", "WebhookEvent"]
