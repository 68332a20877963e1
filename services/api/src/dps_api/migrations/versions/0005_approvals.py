"""approval groups, rules, rule groups and approval requests

Revision ID: 0005_approvals
Revises: 0004_quotes
"""

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision = "0005_approvals"
down_revision = "0004_quotes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # PLACEHOLDER: filled by the work on this context


def downgrade() -> None:
    pass
