"""events keep the request id that caused them (the message's X-Request-Id header), so the consumer and
the delivery worker log an event and its deliveries under the id of the api request behind them

Revision ID: 0004_event_request_id
Revises: 0003_idempotency_by_client
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_event_request_id"
down_revision = "0003_idempotency_by_client"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("webhook_events", sa.Column("request_id", sa.String(128)))


def downgrade() -> None:
    op.drop_column("webhook_events", "request_id")
