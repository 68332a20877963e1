"""opportunities and deal groups

Revision ID: 0003_opportunities
Revises: 0002_catalog
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_opportunities"
down_revision = "0002_catalog"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "opportunities",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("crm_id", sa.String(100)),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("account_name", sa.String(200), nullable=False),
        sa.Column("owner_user_id", sa.Uuid(), nullable=False),
        sa.Column("stage", sa.String(20), nullable=False),
        sa.Column("amount", sa.Numeric(21, 6)),
        sa.Column("currency", sa.String(3)),
        sa.Column("close_date", sa.Date()),
        sa.Column("closed_won_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_opportunities"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_opportunities_organization_id_organizations"
        ),
        sa.ForeignKeyConstraint(["owner_user_id"], ["users.id"], name="fk_opportunities_owner_user_id_users"),
        sa.UniqueConstraint("organization_id", "crm_id", name="uq_opportunities_organization_id"),
        sa.CheckConstraint("amount IS NULL OR currency IS NOT NULL", name=op.f("ck_opportunities_amount_has_currency")),
        sa.CheckConstraint("amount IS NULL OR amount >= 0", name=op.f("ck_opportunities_amount_not_negative")),
    )
    op.create_index("ix_opportunities_organization_id", "opportunities", ["organization_id"])
    op.create_index("ix_opportunities_owner_user_id", "opportunities", ["owner_user_id"])
    op.create_table(
        "deal_groups",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.String(2000)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_deal_groups"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_deal_groups_organization_id_organizations"
        ),
    )
    op.create_index("ix_deal_groups_organization_id", "deal_groups", ["organization_id"])
    op.create_table(
        "deal_group_opportunities",
        sa.Column("deal_group_id", sa.Uuid(), nullable=False),
        sa.Column("opportunity_id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("deal_group_id", "opportunity_id", name="pk_deal_group_opportunities"),
        sa.ForeignKeyConstraint(
            ["deal_group_id"],
            ["deal_groups.id"],
            name="fk_deal_group_opportunities_deal_group_id_deal_groups",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["opportunity_id"], ["opportunities.id"], name="fk_deal_group_opportunities_opportunity_id_opportunities"
        ),
    )
    op.create_index("ix_deal_group_opportunities_opportunity_id", "deal_group_opportunities", ["opportunity_id"])


def downgrade() -> None:
    op.drop_table("deal_group_opportunities")
    op.drop_table("deal_groups")
    op.drop_table("opportunities")
