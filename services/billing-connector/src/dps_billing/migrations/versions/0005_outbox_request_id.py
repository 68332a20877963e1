"""the outbox keeps the request id of the request that recorded each event (the relay publishes it
as the message header X-Request-Id)

Revision ID: 0005_outbox_request_id
Revises: 0004_connect_in_browser
"""

from alembic import op

from dps_common.outbox.migration import add_request_id, drop_request_id

revision = "0005_outbox_request_id"
down_revision = "0004_connect_in_browser"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_request_id(op)  # the shared outbox's step, as every service that owns an outbox runs it


def downgrade() -> None:
    drop_request_id(op)
