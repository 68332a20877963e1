"""the connect flow bound to the browser, organization-wide push lists, pacer turns

- ``billing_oauth_states`` gains the start ticket (its SHA-256 only, single use, short-lived), the
  browser nonce's SHA-256 (set when the browser starts the flow) and the console's return URL;
- ``billing_pushes`` an index for the organization's pushes newest first (``GET /billing-pushes``);
- ``billing_pacer_turns``: each paced call of an account, in order, and when it ended, so that no
  one-second window at the platform holds more than the configured rate.

Revision ID: 0004_connect_in_browser
Revises: 0003_idempotency_by_client
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_connect_in_browser"
down_revision = "0003_idempotency_by_client"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("billing_oauth_states", sa.Column("ticket_hash", sa.LargeBinary()))
    op.add_column("billing_oauth_states", sa.Column("ticket_expires_at", sa.DateTime(timezone=True)))
    op.add_column("billing_oauth_states", sa.Column("started_at", sa.DateTime(timezone=True)))
    op.add_column("billing_oauth_states", sa.Column("nonce_hash", sa.LargeBinary()))
    op.add_column("billing_oauth_states", sa.Column("return_url", sa.Text()))
    op.create_index("ix_billing_oauth_states_ticket_hash", "billing_oauth_states", ["ticket_hash"], unique=True)
    op.create_index("ix_billing_pushes_organization_id_id", "billing_pushes", ["organization_id", "id"])
    op.add_column("billing_pacer_slots", sa.Column("turns", sa.BigInteger(), server_default="0", nullable=False))
    op.create_table(
        "billing_pacer_turns",
        sa.Column("account_id", sa.String(255), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("planned_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("account_id", "seq", name="pk_billing_pacer_turns"),
    )


def downgrade() -> None:
    op.drop_table("billing_pacer_turns")
    op.drop_column("billing_pacer_slots", "turns")
    op.drop_index("ix_billing_pushes_organization_id_id", table_name="billing_pushes")
    op.drop_index("ix_billing_oauth_states_ticket_hash", table_name="billing_oauth_states")
    for column in ("return_url", "nonce_hash", "started_at", "ticket_expires_at", "ticket_hash"):
        op.drop_column("billing_oauth_states", column)
