"""a pacer turn records the push claim it was taken for, so that the turn of a worker that died while
calling counts as ended once the claim's lease has run out, instead of two minutes after its slot

Revision ID: 0008_pacer_turn_claims
Revises: 0007_forget_kept_start_urls
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_pacer_turn_claims"
down_revision = "0007_forget_kept_start_urls"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("billing_pacer_turns", sa.Column("push_id", sa.Uuid()))  # nullable: no rewrite
    op.add_column("billing_pacer_turns", sa.Column("claim_token", sa.Uuid()))


def downgrade() -> None:
    op.drop_column("billing_pacer_turns", "claim_token")
    op.drop_column("billing_pacer_turns", "push_id")
