"""idempotency keys by client: a key is scoped to the API key that sent it (its id joins the primary
key), so another key of the organization reusing an Idempotency-Key makes a request of its own

Revision ID: 0003_idempotency_by_client
Revises: 0002_idempotency_keys
"""

from alembic import op

from dps_common.idempotency.migration import scope_idempotency_keys_by_client, unscope_idempotency_keys_by_client

revision = "0003_idempotency_by_client"
down_revision = "0002_idempotency_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    scope_idempotency_keys_by_client(op)


def downgrade() -> None:
    unscope_idempotency_keys_by_client(op)
