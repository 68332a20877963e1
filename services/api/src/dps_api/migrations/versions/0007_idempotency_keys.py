"""idempotency keys: the answers of POSTs sent with an Idempotency-Key, kept 24 hours for replay
(the revision every service keeps, written once: dps_common.idempotency.migration)

Revision ID: 0007_idempotency_keys
Revises: 0006_outbox_notify
"""

from dps_common.idempotency.migration import add_table as upgrade
from dps_common.idempotency.migration import drop_table as downgrade

revision = "0007_idempotency_keys"
down_revision = "0006_outbox_notify"
branch_labels = None
depends_on = None

__all__ = ["downgrade", "upgrade"]
