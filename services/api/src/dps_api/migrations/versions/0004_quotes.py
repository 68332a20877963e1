"""pricing quotes and their lines

Revision ID: 0004_quotes
Revises: 0003_opportunities
"""

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision = "0004_quotes"
down_revision = "0003_opportunities"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # PLACEHOLDER: filled by the work on this context


def downgrade() -> None:
    pass
