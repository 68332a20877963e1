"""billing connections, authorize states, platform events, pushes and their objects, pacing slots,
and the shared outbox

Revision ID: 0001_billing
Revises:
"""

import sqlalchemy as sa
from alembic import op
from alembic.operations import Operations
from sqlalchemy.dialects import postgresql

from dps_common.outbox.migration import create_outbox, drop_outbox

revision = "0001_billing"
down_revision = None
branch_labels = None
depends_on = None

_ACTIVE = sa.text("status IN ('queued', 'running')")


def upgrade() -> None:
    op.create_table(
        "billing_connections",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.String(255), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("broken_reason", sa.Text()),
        sa.Column("connected_by", sa.Uuid(), nullable=False),
        sa.Column("connected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("access_token_sealed", sa.LargeBinary(), nullable=False),
        sa.Column("refresh_token_sealed", sa.LargeBinary(), nullable=False),
        sa.Column("access_expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("refreshed_at", sa.DateTime(timezone=True)),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("status IN ('connected', 'broken')", name="status"),
        sa.PrimaryKeyConstraint("id", name="pk_billing_connections"),
        sa.UniqueConstraint("organization_id", name="uq_billing_connections_organization_id"),
    )
    op.create_index("ix_billing_connections_account_id", "billing_connections", ["account_id"])

    op.create_table(
        "billing_oauth_states",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("livemode", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("consumed_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_billing_oauth_states"),
    )
    op.create_index("ix_billing_oauth_states_expires_at", "billing_oauth_states", ["expires_at"])

    op.create_table(
        "billing_platform_events",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("event_type", sa.String(128), nullable=False),
        sa.Column("account_id", sa.String(255)),
        sa.Column("received_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_billing_platform_events"),
    )
    op.create_index("ix_billing_platform_events_received_at", "billing_platform_events", ["received_at"])

    op.create_table(
        "billing_pushes",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("quote_id", sa.Uuid(), nullable=False),
        sa.Column("requested_by", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("snapshot", postgresql.JSONB(), nullable=False),
        sa.Column("planned_at", sa.DateTime(timezone=True)),
        sa.Column("lines_total", sa.Integer(), server_default="0", nullable=False),
        sa.Column("products_created", sa.Integer(), server_default="0", nullable=False),
        sa.Column("prices_created", sa.Integer(), server_default="0", nullable=False),
        sa.Column("quote_created", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("warnings", postgresql.JSONB(), server_default=sa.text("'[]'::jsonb"), nullable=False),
        sa.Column("error_code", sa.String(64)),
        sa.Column("error_message", sa.Text()),
        sa.Column("error_param", sa.Text()),
        sa.Column("billing_quote_id", sa.String(255)),
        sa.Column("review_url", sa.Text()),
        sa.Column("lease_until", sa.DateTime(timezone=True)),
        sa.Column("claim_token", sa.Uuid()),
        sa.Column("claims", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed')", name="status"),
        sa.PrimaryKeyConstraint("id", name="pk_billing_pushes"),
    )
    op.create_index(
        "ix_billing_pushes_organization_id_quote_id_id", "billing_pushes", ["organization_id", "quote_id", "id"]
    )
    op.create_index(
        "ix_billing_pushes_one_active_per_quote",
        "billing_pushes",
        ["organization_id", "quote_id"],
        unique=True,
        postgresql_where=_ACTIVE,
    )
    op.create_index("ix_billing_pushes_claimable", "billing_pushes", ["lease_until"], postgresql_where=_ACTIVE)

    op.create_table(
        "billing_push_objects",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("push_id", sa.Uuid(), nullable=False),
        sa.Column("line_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), server_default="0", nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("platform_id", sa.String(255)),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("kind IN ('product', 'price', 'quote')", name="kind"),
        sa.ForeignKeyConstraint(
            ["push_id"], ["billing_pushes.id"], name="fk_billing_push_objects_push_id_billing_pushes", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_billing_push_objects"),
        sa.UniqueConstraint("push_id", "line_id", "kind", name="uq_billing_push_objects_push_id"),
    )

    op.create_table(
        "billing_pacer_slots",
        sa.Column("account_id", sa.String(255), nullable=False),
        sa.Column("next_slot", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("account_id", name="pk_billing_pacer_slots"),
    )

    create_outbox(Operations(op.get_context()))  # the Operations object behind the ``op`` proxy


def downgrade() -> None:
    drop_outbox(Operations(op.get_context()))
    op.drop_table("billing_pacer_slots")
    op.drop_table("billing_push_objects")
    op.drop_index("ix_billing_pushes_claimable", table_name="billing_pushes")
    op.drop_index("ix_billing_pushes_one_active_per_quote", table_name="billing_pushes")
    op.drop_index("ix_billing_pushes_organization_id_quote_id_id", table_name="billing_pushes")
    op.drop_table("billing_pushes")
    op.drop_index("ix_billing_platform_events_received_at", table_name="billing_platform_events")
    op.drop_table("billing_platform_events")
    op.drop_index("ix_billing_oauth_states_expires_at", table_name="billing_oauth_states")
    op.drop_table("billing_oauth_states")
    op.drop_index("ix_billing_connections_account_id", table_name="billing_connections")
    op.drop_table("billing_connections")
