"""idempotency keys by client: a key is scoped to the API key that sent it (its id joins the primary
key), so another key of the organization reusing an Idempotency-Key makes a request of its own
(the revision every service keeps, written once: dps_common.idempotency.migration)

Revision ID: 0003_idempotency_by_client
Revises: 0002_idempotency_keys
"""

from dps_common.idempotency.migration import scope_by_client as upgrade
from dps_common.idempotency.migration import unscope_by_client as downgrade

revision = "0003_idempotency_by_client"
down_revision = "0002_idempotency_keys"
branch_labels = None
depends_on = None

__all__ = ["downgrade", "upgrade"]
