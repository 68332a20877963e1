"""approval groups, rules, rule groups and approval requests

Revision ID: 0005_approvals
Revises: 0004_quotes
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005_approvals"
down_revision = "0004_quotes"
branch_labels = None
depends_on = None

CONDITION_TYPES = (
    "'MAX_DISCOUNT_PERCENT_ABOVE', 'TOTAL_CONTRACT_VALUE_ABOVE', 'TERM_MONTHS_ABOVE', 'LOCKED_PRICE_BELOW_LIST'"
)


def _timestamps() -> list[sa.Column]:
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _organization_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["organization_id"], ["organizations.id"], name=f"fk_{table}_organization_id_organizations"
    )


def upgrade() -> None:
    op.create_table(
        "approval_groups",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("required_approvals", sa.Integer(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint("id", name="pk_approval_groups"),
        _organization_fk("approval_groups"),
        sa.CheckConstraint("required_approvals >= 1", name=op.f("ck_approval_groups_required_approvals_positive")),
    )
    op.create_index("ix_approval_groups_organization_id", "approval_groups", ["organization_id"])

    op.create_table(
        "approval_group_members",
        sa.Column("approval_group_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("approval_group_id", "user_id", name="pk_approval_group_members"),
        sa.ForeignKeyConstraint(
            ["approval_group_id"],
            ["approval_groups.id"],
            name="fk_approval_group_members_approval_group_id_approval_groups",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_approval_group_members_user_id_users"),
    )
    op.create_index("ix_approval_group_members_user_id", "approval_group_members", ["user_id"])

    op.create_table(
        "approval_rule_groups",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint("id", name="pk_approval_rule_groups"),
        _organization_fk("approval_rule_groups"),
    )
    op.create_index("ix_approval_rule_groups_organization_id", "approval_rule_groups", ["organization_id"])

    op.create_table(
        "approval_rules",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("condition_type", sa.String(40), nullable=False),
        sa.Column("threshold", sa.Numeric(21, 6)),
        sa.Column("currency", sa.String(3)),
        sa.Column("approval_group_id", sa.Uuid(), nullable=False),
        sa.Column("rule_group_id", sa.Uuid()),
        sa.Column("active", sa.Boolean(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint("id", name="pk_approval_rules"),
        _organization_fk("approval_rules"),
        sa.ForeignKeyConstraint(
            ["approval_group_id"], ["approval_groups.id"], name="fk_approval_rules_approval_group_id_approval_groups"
        ),
        sa.ForeignKeyConstraint(
            ["rule_group_id"], ["approval_rule_groups.id"], name="fk_approval_rules_rule_group_id_approval_rule_groups"
        ),
        sa.CheckConstraint(f"condition_type IN ({CONDITION_TYPES})", name=op.f("ck_approval_rules_condition_type")),
        sa.CheckConstraint("threshold IS NULL OR threshold >= 0", name=op.f("ck_approval_rules_threshold_not_negative")),
    )
    op.create_index("ix_approval_rules_organization_id", "approval_rules", ["organization_id"])
    op.create_index("ix_approval_rules_approval_group_id", "approval_rules", ["approval_group_id"])
    op.create_index("ix_approval_rules_rule_group_id", "approval_rules", ["rule_group_id"])

    op.create_table(
        "approval_requests",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("quote_id", sa.Uuid(), nullable=False),
        sa.Column("quote_owner_user_id", sa.Uuid(), nullable=False),
        sa.Column("requested_by_user_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("current_step", sa.Integer()),
        sa.Column("steps", postgresql.JSONB(), nullable=False),
        sa.Column("decisions", postgresql.JSONB(), nullable=False),
        *_timestamps(),
        sa.Column("decided_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name="pk_approval_requests"),
        _organization_fk("approval_requests"),
        sa.ForeignKeyConstraint(["quote_id"], ["quotes.id"], name="fk_approval_requests_quote_id_quotes"),
        sa.ForeignKeyConstraint(
            ["quote_owner_user_id"], ["users.id"], name="fk_approval_requests_quote_owner_user_id_users"
        ),
        sa.ForeignKeyConstraint(
            ["requested_by_user_id"], ["users.id"], name="fk_approval_requests_requested_by_user_id_users"
        ),
        sa.CheckConstraint(
            "status IN ('PENDING', 'APPROVED', 'REJECTED', 'RECALLED')", name=op.f("ck_approval_requests_status")
        ),
    )
    op.create_index("ix_approval_requests_organization_id", "approval_requests", ["organization_id", "id"])
    op.create_index("ix_approval_requests_quote_id", "approval_requests", ["quote_id"])
    op.create_index(
        "uq_approval_requests_pending_quote",
        "approval_requests",
        ["quote_id"],
        unique=True,
        postgresql_where=sa.text("status = 'PENDING'"),
    )


def downgrade() -> None:
    op.drop_table("approval_requests")
    op.drop_table("approval_rules")
    op.drop_table("approval_rule_groups")
    op.drop_table("approval_group_members")
    op.drop_table("approval_groups")
