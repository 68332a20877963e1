"""products, product versions and pricebooks

Revision ID: 0002_catalog
Revises: 0001_identity
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002_catalog"
down_revision = "0001_identity"
branch_labels = None
depends_on = None

_PRICE_MODELS = "price_model IN ('FLAT', 'PER_UNIT', 'TIERED', 'RAMPED', 'HOURLY', 'ONE_TIME_FEE')"
_PRICE_FREQUENCIES = "price_frequency IN ('MONTHLY', 'QUARTERLY', 'SEMI_ANNUAL', 'ANNUAL', 'ONE_TIME')"


def _product_columns() -> list[sa.Column]:
    """The fields of one product version, shared by ``products`` and ``product_versions``."""
    return [
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("spec_id", sa.String(100), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("short_name", sa.String(200)),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("price_model", sa.String(20), nullable=False),
        sa.Column("price_frequency", sa.String(20), nullable=False),
        sa.Column("list_prices", postgresql.JSONB(), nullable=False),
        sa.Column("tiers", postgresql.JSONB(), nullable=False),
        sa.Column("locked", sa.Boolean(), nullable=False),
        sa.Column("cost", postgresql.JSONB(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "products",
        sa.Column("id", sa.Uuid(), nullable=False),
        *_product_columns(),
        sa.PrimaryKeyConstraint("id", name="pk_products"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_products_organization_id_organizations"
        ),
        sa.UniqueConstraint("organization_id", "spec_id", name="uq_products_organization_id"),
        sa.CheckConstraint(_PRICE_MODELS, name=op.f("ck_products_price_model")),
        sa.CheckConstraint(_PRICE_FREQUENCIES, name=op.f("ck_products_price_frequency")),
        sa.CheckConstraint("version >= 1", name=op.f("ck_products_version")),
    )
    op.create_index("ix_products_organization_id", "products", ["organization_id", "id"])
    op.create_table(
        "product_versions",
        sa.Column("product_id", sa.Uuid(), nullable=False),
        *_product_columns(),
        sa.PrimaryKeyConstraint("product_id", "version", name="pk_product_versions"),
        sa.ForeignKeyConstraint(["product_id"], ["products.id"], name="fk_product_versions_product_id_products"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_product_versions_organization_id_organizations"
        ),
    )
    op.create_table(
        "pricebooks",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_pricebooks"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_pricebooks_organization_id_organizations"
        ),
    )
    op.create_index("ix_pricebooks_organization_id", "pricebooks", ["organization_id", "id"])
    op.create_table(
        "pricebook_versions",
        sa.Column("pricebook_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pricebook_id", "version", name="pk_pricebook_versions"),
        sa.ForeignKeyConstraint(
            ["pricebook_id"], ["pricebooks.id"], name="fk_pricebook_versions_pricebook_id_pricebooks"
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_pricebook_versions_organization_id_organizations"
        ),
    )
    op.create_table(
        "pricebook_entries",
        sa.Column("pricebook_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("product_id", sa.Uuid(), nullable=False),
        sa.Column("unit_price", sa.Numeric(), nullable=False),
        sa.PrimaryKeyConstraint("pricebook_id", "version", "product_id", name="pk_pricebook_entries"),
        sa.ForeignKeyConstraint(
            ["pricebook_id", "version"],
            ["pricebook_versions.pricebook_id", "pricebook_versions.version"],
            name="fk_pricebook_entries_pricebook_id_pricebook_versions",
        ),
        sa.ForeignKeyConstraint(["product_id"], ["products.id"], name="fk_pricebook_entries_product_id_products"),
        sa.CheckConstraint("unit_price >= 0", name=op.f("ck_pricebook_entries_unit_price_not_negative")),
    )
    op.create_table(
        "pricebook_users",
        sa.Column("pricebook_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("pricebook_id", "user_id", name="pk_pricebook_users"),
        sa.ForeignKeyConstraint(["pricebook_id"], ["pricebooks.id"], name="fk_pricebook_users_pricebook_id_pricebooks"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_pricebook_users_user_id_users"),
    )


def downgrade() -> None:
    op.drop_table("pricebook_users")
    op.drop_table("pricebook_entries")
    op.drop_table("pricebook_versions")
    op.drop_table("pricebooks")
    op.drop_index("ix_products_organization_id", table_name="products")
    op.drop_table("product_versions")
    op.drop_table("products")
