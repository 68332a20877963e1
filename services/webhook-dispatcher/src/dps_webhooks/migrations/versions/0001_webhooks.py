"""webhook endpoints, events received, deliveries and attempts

Revision ID: 0001_webhooks
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001_webhooks"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), server_default="", nullable=False),
        sa.Column("event_types", postgresql.ARRAY(sa.String(64)), server_default=sa.text("'{}'"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("disabled_reason", sa.Text()),
        sa.Column("secret_sealed", sa.LargeBinary(), nullable=False),
        sa.Column("secret_rotated_at", sa.DateTime(timezone=True)),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("status IN ('ACTIVE', 'PAUSED', 'DISABLED')", name="status"),
        sa.CheckConstraint("consecutive_failures >= 0", name="consecutive_failures"),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_endpoints"),
    )
    op.create_index("ix_webhook_endpoints_organization_id_id", "webhook_endpoints", ["organization_id", "id"])

    op.create_table(
        "webhook_events",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("body", sa.Text()),
        sa.Column("body_bytes", sa.Integer(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_events"),
    )
    op.create_index("ix_webhook_events_received_at", "webhook_events", ["received_at"])

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("endpoint_id", sa.Uuid(), nullable=False),
        sa.Column("event_id", sa.Uuid(), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("is_test", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("retry_of", sa.Uuid()),
        sa.Column("attempt_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True)),
        sa.Column("claim_token", sa.Uuid()),
        sa.Column("last_response_status", sa.Integer()),
        sa.Column("last_response_excerpt", sa.Text()),
        sa.Column("last_error_message", sa.Text()),
        sa.Column("last_duration_ms", sa.Integer()),
        sa.Column("last_attempted_at", sa.DateTime(timezone=True)),
        sa.Column("completed_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("status IN ('PENDING', 'SUCCESS', 'FAILED', 'EXHAUSTED')", name="status"),
        sa.CheckConstraint("next_attempt_at IS NULL OR status IN ('PENDING', 'FAILED')", name="final_is_unscheduled"),
        sa.ForeignKeyConstraint(
            ["endpoint_id"], ["webhook_endpoints.id"], ondelete="CASCADE",
            name="fk_webhook_deliveries_endpoint_id_webhook_endpoints",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"], ["webhook_events.id"], ondelete="CASCADE",
            name="fk_webhook_deliveries_event_id_webhook_events",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
    )
    op.create_index(
        "ix_webhook_deliveries_due", "webhook_deliveries", ["next_attempt_at"],
        postgresql_where=sa.text("next_attempt_at IS NOT NULL"),
    )
    op.create_index("ix_webhook_deliveries_endpoint_id_id", "webhook_deliveries", ["endpoint_id", "id"])
    op.create_index("ix_webhook_deliveries_created_at", "webhook_deliveries", ["created_at"])
    op.create_index("ix_webhook_deliveries_event_id", "webhook_deliveries", ["event_id"])

    op.create_table(
        "webhook_delivery_attempts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("delivery_id", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("response_status", sa.Integer()),
        sa.Column("response_excerpt", sa.Text()),
        sa.Column("error_message", sa.Text()),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"], ["webhook_deliveries.id"], ondelete="CASCADE",
            name="fk_webhook_delivery_attempts_delivery_id_webhook_deliveries",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_delivery_attempts"),
        sa.UniqueConstraint("delivery_id", "attempt", name="uq_webhook_delivery_attempts_attempt"),
    )


def downgrade() -> None:
    op.drop_table("webhook_delivery_attempts")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_events")
    op.drop_table("webhook_endpoints")
