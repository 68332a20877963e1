"""pricing quotes and their lines

Revision ID: 0004_quotes
Revises: 0003_opportunities
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004_quotes"
down_revision = "0003_opportunities"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quotes",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("opportunity_id", sa.Uuid()),
        sa.Column("owner_user_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("billing_frequency", sa.String(20), nullable=False),
        sa.Column("subscription_term_months", sa.Integer(), nullable=False),
        sa.Column("start_date", sa.Date()),
        sa.Column("end_date", sa.Date()),
        sa.Column("pricebook_id", sa.Uuid()),
        sa.Column("pricebook_version", sa.Integer()),
        sa.Column("recurring_per_billing_period", sa.Numeric(), nullable=False),
        sa.Column("one_time", sa.Numeric(), nullable=False),
        sa.Column("total_contract_value", sa.Numeric(), nullable=False),
        sa.Column("list_total_contract_value", sa.Numeric(), nullable=False),
        sa.Column("max_discount_percent", sa.Numeric(), nullable=False),
        sa.Column("locked_below_list", sa.Boolean(), nullable=False),
        sa.Column("line_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_quotes"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_quotes_organization_id_organizations"
        ),
        sa.ForeignKeyConstraint(
            ["opportunity_id"], ["opportunities.id"], name="fk_quotes_opportunity_id_opportunities"
        ),
        sa.ForeignKeyConstraint(["owner_user_id"], ["users.id"], name="fk_quotes_owner_user_id_users"),
        sa.ForeignKeyConstraint(
            ["pricebook_id", "pricebook_version"],
            ["pricebook_versions.pricebook_id", "pricebook_versions.version"],
            name="fk_quotes_pricebook_id_pricebook_versions",
        ),
        sa.CheckConstraint(
            "status IN ('DRAFT', 'PENDING_APPROVAL', 'APPROVED', 'REJECTED')", name=op.f("ck_quotes_status")
        ),
        sa.CheckConstraint(
            "billing_frequency IN ('MONTHLY', 'QUARTERLY', 'SEMI_ANNUAL', 'ANNUAL')",
            name=op.f("ck_quotes_billing_frequency"),
        ),
        sa.CheckConstraint(
            "subscription_term_months BETWEEN 1 AND 120", name=op.f("ck_quotes_subscription_term_months")
        ),
        sa.CheckConstraint(
            "end_date IS NULL OR start_date IS NULL OR end_date >= start_date", name=op.f("ck_quotes_end_after_start")
        ),
        sa.CheckConstraint(
            "(pricebook_id IS NULL) = (pricebook_version IS NULL)", name=op.f("ck_quotes_pricebook_pinned")
        ),
    )
    op.create_index("ix_quotes_organization_id", "quotes", ["organization_id", "id"])
    op.create_index("ix_quotes_opportunity_id", "quotes", ["opportunity_id"])
    op.create_index("ix_quotes_owner_user_id", "quotes", ["owner_user_id"])
    op.create_table(
        "quote_lines",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("quote_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("product_id", sa.Uuid(), nullable=False),
        sa.Column("product_version", sa.Integer(), nullable=False),
        sa.Column("product_spec_id", sa.String(100), nullable=False),
        sa.Column("product_name", sa.String(200), nullable=False),
        sa.Column("product_short_name", sa.String(200)),
        sa.Column("custom_name", sa.String(200)),
        sa.Column("price_model", sa.String(20), nullable=False),
        sa.Column("price_frequency", sa.String(20), nullable=False),
        sa.Column("locked", sa.Boolean(), nullable=False),
        sa.Column("catalog_unit_price", sa.Numeric(), nullable=False),
        sa.Column("tiers", postgresql.JSONB(), nullable=False),
        sa.Column("price_basis", sa.String(10), nullable=False),
        sa.Column("quantity", sa.Numeric(), nullable=False),
        sa.Column("list_unit_price", sa.Numeric(), nullable=False),
        sa.Column("net_unit_price", sa.Numeric(), nullable=False),
        sa.Column("discount_percent", sa.Numeric(), nullable=False),
        sa.Column("amount_per_billing_period", sa.Numeric()),
        sa.Column("one_time_amount", sa.Numeric()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_quote_lines"),
        sa.ForeignKeyConstraint(
            ["quote_id"], ["quotes.id"], name="fk_quote_lines_quote_id_quotes", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_quote_lines_organization_id_organizations"
        ),
        sa.ForeignKeyConstraint(
            ["product_id", "product_version"],
            ["product_versions.product_id", "product_versions.version"],
            name="fk_quote_lines_product_id_product_versions",
        ),
        sa.CheckConstraint("price_basis IN ('DISCOUNT', 'NET')", name=op.f("ck_quote_lines_price_basis")),
        sa.CheckConstraint("quantity > 0", name=op.f("ck_quote_lines_quantity_positive")),
        sa.CheckConstraint("net_unit_price >= 0", name=op.f("ck_quote_lines_net_unit_price_not_negative")),
        sa.CheckConstraint(
            "(amount_per_billing_period IS NULL) <> (one_time_amount IS NULL)",
            name=op.f("ck_quote_lines_one_kind_of_amount"),
        ),
    )
    op.create_index("ix_quote_lines_quote_id", "quote_lines", ["quote_id", "position"])


def downgrade() -> None:
    op.drop_table("quote_lines")
    op.drop_table("quotes")
