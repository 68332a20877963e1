"""Every table of the connector; importing this registers them all on the metadata."""

from dps_billing.db.models import idempotency  # noqa: F401  (the shared idempotency_keys table)
from dps_billing.db.models.connections import BillingConnection, OAuthState, PlatformEvent
from dps_billing.db.models.pushes import BillingPush, PacerSlot, PacerTurn, PushObject

__all__ = ["BillingConnection", "BillingPush", "OAuthState", "PacerSlot", "PacerTurn", "PlatformEvent", "PushObject"]
