"""idempotency keys: the answers of POSTs sent with an Idempotency-Key, kept 24 hours for replay

Revision ID: 0002_idempotency_keys
Revises: 0001_webhooks
"""

from alembic import op

from dps_common.idempotency.migration import create_idempotency_keys, drop_idempotency_keys

revision = "0002_idempotency_keys"
down_revision = "0001_webhooks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_idempotency_keys(op)


def downgrade() -> None:
    drop_idempotency_keys(op)
