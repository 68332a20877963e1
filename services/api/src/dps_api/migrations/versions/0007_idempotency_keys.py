"""idempotency keys: the answers of POSTs sent with an Idempotency-Key, kept 24 hours for replay

Revision ID: 0007_idempotency_keys
Revises: 0006_outbox_notify
"""

from alembic import op

from dps_common.idempotency.migration import create_idempotency_keys, drop_idempotency_keys

revision = "0007_idempotency_keys"
down_revision = "0006_outbox_notify"
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_idempotency_keys(op)


def downgrade() -> None:
    drop_idempotency_keys(op)
