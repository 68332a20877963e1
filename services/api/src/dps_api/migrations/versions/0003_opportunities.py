"""opportunities and deal groups

Revision ID: 0003_opportunities
Revises: 0002_catalog
"""

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision = "0003_opportunities"
down_revision = "0002_catalog"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # PLACEHOLDER: filled by the work on this context


def downgrade() -> None:
    pass
