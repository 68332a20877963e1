"""the outbox keeps the request id of the request that recorded each event (the relay publishes it
as the message header X-Request-Id, so the dispatcher logs its deliveries under the same id)

Revision ID: 0010_outbox_request_id
Revises: 0009_console_access
"""

from alembic import op

from dps_common.outbox.migration import add_request_id, drop_request_id

revision = "0010_outbox_request_id"
down_revision = "0009_console_access"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_request_id(op)  # the shared outbox's step, as every service that owns an outbox runs it


def downgrade() -> None:
    drop_request_id(op)
