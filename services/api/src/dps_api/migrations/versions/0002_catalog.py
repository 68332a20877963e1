"""products, product versions and pricebooks

Revision ID: 0002_catalog
Revises: 0001_identity
"""

import sqlalchemy as sa  # noqa: F401
from alembic import op  # noqa: F401

revision = "0002_catalog"
down_revision = "0001_identity"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # PLACEHOLDER: filled by the work on this context


def downgrade() -> None:
    pass
