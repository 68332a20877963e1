"""form results (one action per submitted form, a secret sealed across its redirect) and the
sign-in mail queue

Revision ID: 0002_form_results_mail_queue
Revises: 0001_console
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002_form_results_mail_queue"
down_revision = "0001_console"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_form_results",
        sa.Column("session_id", sa.Uuid(), nullable=False),
        sa.Column("form_token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("location", sa.Text()),
        sa.Column("page", postgresql.JSONB()),
        sa.Column("sealed", sa.LargeBinary()),
        sa.Column("sealed_until", sa.DateTime(timezone=True)),
        sa.ForeignKeyConstraint(["session_id"], ["console_sessions.id"], ondelete="CASCADE",
                                name="fk_console_form_results_session_id_console_sessions"),
        sa.PrimaryKeyConstraint("session_id", "form_token", name="pk_console_form_results"),
    )
    op.create_index("ix_console_form_results_created_at", "console_form_results", ["created_at"])
    op.create_index("ix_console_form_results_sealed_until", "console_form_results", ["sealed_until"])
    op.create_table(
        "console_sign_in_requests",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True)),
        sa.Column("claim_token", sa.Uuid()),
        sa.PrimaryKeyConstraint("id", name="pk_console_sign_in_requests"),
    )
    op.create_index("ix_console_sign_in_requests_due_at", "console_sign_in_requests", ["due_at"])


def downgrade() -> None:
    op.drop_index("ix_console_sign_in_requests_due_at", table_name="console_sign_in_requests")
    op.drop_table("console_sign_in_requests")
    op.drop_index("ix_console_form_results_sealed_until", table_name="console_form_results")
    op.drop_index("ix_console_form_results_created_at", table_name="console_form_results")
    op.drop_table("console_form_results")
