"""the organization's event log (``GET /events``): its events newest first, all of them or of one type,
read on an index each, so a page costs the same however deep it is

Revision ID: 0007_event_log
Revises: 0006_throttle_and_signed_request
"""

from alembic import op

revision = "0007_event_log"
down_revision = "0006_throttle_and_signed_request"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_webhook_events_organization_id_received_at_id",
        "webhook_events",
        ["organization_id", "received_at", "id"],
    )
    op.create_index(
        "ix_webhook_events_organization_id_event_type",
        "webhook_events",
        ["organization_id", "event_type", "received_at", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_events_organization_id_event_type", table_name="webhook_events")
    op.drop_index("ix_webhook_events_organization_id_received_at_id", table_name="webhook_events")
