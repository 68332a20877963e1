"""A stand-in for the billing platform (Stripe), for tests and `make run`: a test double, never part of
a service's runtime code."""

from .faults import Fault, Faults
from .recording import RecordedRequest
from .server import BillingStandIn
from .webhooks import WebhookDelivery

__all__ = ["BillingStandIn", "Fault", "Faults", "RecordedRequest", "WebhookDelivery"]
