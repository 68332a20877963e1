"""a push keeps the request id of the request that queued it, so the worker's lines about the push and
the billing.* events it records carry it (the outbox's request_id, the message's X-Request-Id)

Revision ID: 0006_push_request_id
Revises: 0005_outbox_request_id
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_push_request_id"
down_revision = "0005_outbox_request_id"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("billing_pushes", sa.Column("request_id", sa.String(128)))  # nullable: no rewrite


def downgrade() -> None:
    op.drop_column("billing_pushes", "request_id")
