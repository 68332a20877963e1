"""the settings console: API keys get a kind ('integration', or 'console': a signed-in person's
short-lived credential) and an expiry; people get API-key access (granted by an admin)

Revision ID: 0009_console_access
Revises: 0008_idempotency_by_client
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_console_access"
down_revision = "0008_idempotency_by_client"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("api_key_access", sa.Boolean(), server_default=sa.false(), nullable=False))
    # sign-in looks a person up by email in any organization, ignoring case
    op.create_index("ix_users_email_lower", "users", [sa.text("lower(email)")])
    # every existing key is an integration's
    op.add_column("api_keys", sa.Column("kind", sa.String(20), server_default="integration", nullable=False))
    op.add_column("api_keys", sa.Column("expires_at", sa.DateTime(timezone=True)))
    op.create_check_constraint(op.f("ck_api_keys_kind"), "api_keys", "kind IN ('integration', 'console')")
    op.create_check_constraint(
        op.f("ck_api_keys_console_expires"), "api_keys", "kind = 'integration' OR expires_at IS NOT NULL"
    )


def downgrade() -> None:
    # console credentials only exist for the console: without the column they would be integration keys
    op.execute("DELETE FROM api_keys WHERE kind = 'console'")
    op.drop_constraint(op.f("ck_api_keys_console_expires"), "api_keys", type_="check")
    op.drop_constraint(op.f("ck_api_keys_kind"), "api_keys", type_="check")
    op.drop_column("api_keys", "expires_at")
    op.drop_column("api_keys", "kind")
    op.drop_index("ix_users_email_lower", table_name="users")
    op.drop_column("users", "api_key_access")
