"""sign-in links, sessions, sign-in rate counters

Revision ID: 0001_console
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001_console"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_sign_in_links",
        sa.Column("token_hash", sa.LargeBinary(), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("token_hash", name="pk_console_sign_in_links"),
    )
    op.create_index("ix_console_sign_in_links_expires_at", "console_sign_in_links", ["expires_at"])
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("cookie_hash", sa.LargeBinary(), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("person", postgresql.JSONB(), nullable=False),
        sa.Column("credential_sealed", sa.LargeBinary(), nullable=False),
        sa.Column("credential_key_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True)),
        sa.Column("notice", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_console_sessions"),
        sa.UniqueConstraint("cookie_hash", name="uq_console_sessions_cookie_hash"),
    )
    op.create_index("ix_console_sessions_expires_at", "console_sessions", ["expires_at"])
    op.create_table(
        "console_rate_counters",
        sa.Column("bucket", sa.String(400), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("bucket", "window_start", name="pk_console_rate_counters"),
    )


def downgrade() -> None:
    op.drop_table("console_rate_counters")
    op.drop_index("ix_console_sessions_expires_at", table_name="console_sessions")
    op.drop_table("console_sessions")
    op.drop_index("ix_console_sign_in_links_expires_at", table_name="console_sign_in_links")
    op.drop_table("console_sign_in_links")
