"""delivery history partitioned by day: webhook_deliveries by RANGE (id) and webhook_delivery_attempts
by RANGE (delivery_id), a partition a day (UUIDv7 ids begin with their creation time) in the
webhook_partitions schema plus a DEFAULT partition each, so that retention drops days instead of
deleting rows (dps_webhooks.db.partitions). The rows are copied into the new tables; the attempts'
primary key becomes (id, delivery_id); their foreign key moves to each day's partition pair; the
index on created_at goes (retention no longer reads it).

The copy takes the old tables' locks for its whole length: stop the dispatcher while it runs.

Revision ID: 0005_history_partitioned_by_day
Revises: 0004_event_request_id
"""

from datetime import date, timedelta

import sqlalchemy as sa
from alembic import op

from dps_webhooks.db import partitions
from dps_webhooks.db.partitions import ATTEMPT_COLUMNS, ATTEMPTS, DELIVERIES, DELIVERY_COLUMNS

revision = "0005_history_partitioned_by_day"
down_revision = "0004_event_request_id"
branch_labels = None
depends_on = None

DAYS_AHEAD = 7  # as the worker's maintenance keeps them (delivery/retention.py)
OLDEST_DAY = 400  # rows of days older than this (or ids that are not UUIDv7) go to the DEFAULT partition
ASIDE = "_unpartitioned"


def _delivery_columns() -> list[sa.schema.SchemaItem]:
    return [
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("endpoint_id", sa.Uuid(), nullable=False),
        sa.Column("event_id", sa.Uuid(), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("is_test", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("retry_of", sa.Uuid()),
        sa.Column("attempt_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True)),
        sa.Column("claim_token", sa.Uuid()),
        sa.Column("last_response_status", sa.Integer()),
        sa.Column("last_response_excerpt", sa.Text()),
        sa.Column("last_error_message", sa.Text()),
        sa.Column("last_duration_ms", sa.Integer()),
        sa.Column("last_attempted_at", sa.DateTime(timezone=True)),
        sa.Column("completed_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("status IN ('PENDING', 'SUCCESS', 'FAILED', 'EXHAUSTED')", name="status"),
        sa.CheckConstraint("next_attempt_at IS NULL OR status IN ('PENDING', 'FAILED')", name="final_is_unscheduled"),
        sa.ForeignKeyConstraint(
            ["endpoint_id"], ["webhook_endpoints.id"], ondelete="CASCADE",
            name="fk_webhook_deliveries_endpoint_id_webhook_endpoints",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"], ["webhook_events.id"], ondelete="CASCADE",
            name="fk_webhook_deliveries_event_id_webhook_events",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
    ]  # fmt: skip


def _attempt_columns() -> list[sa.schema.SchemaItem]:
    return [
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("delivery_id", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("response_status", sa.Integer()),
        sa.Column("response_excerpt", sa.Text()),
        sa.Column("error_message", sa.Text()),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.UniqueConstraint("delivery_id", "attempt", name="uq_webhook_delivery_attempts_attempt"),
    ]


def _set_aside(table: str, suffix: str) -> None:
    """Rename a table and its indexes (constraints' ones too) so that the new table can take the names."""
    bind = op.get_bind()
    indexes = bind.execute(
        sa.text("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = :t"), {"t": table}
    ).scalars()
    for index in list(indexes):
        op.execute(f"ALTER INDEX {index} RENAME TO {index}{suffix}")
    op.rename_table(table, f"{table}{suffix}")


def _copy(table: str, columns: tuple[str, ...], source: str) -> None:
    names = ", ".join(columns)
    op.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {source}")


def _days_to_create() -> list[date]:
    """The days of the rows copied (as far back as OLDEST_DAY), to DAYS_AHEAD days from today."""
    bind = op.get_bind()
    today: date = bind.execute(sa.text("SELECT (now() AT TIME ZONE 'UTC')::date")).scalar_one()
    oldest = today - timedelta(days=OLDEST_DAY)
    first = bind.execute(
        sa.text(f"SELECT id FROM {DELIVERIES}{ASIDE} WHERE id >= :low AND id < :high ORDER BY id LIMIT 1"),
        {"low": partitions.first_id(oldest), "high": partitions.first_id(today)},
    ).scalar()
    start = partitions.day_of(first) if first is not None else today
    return [start + timedelta(days=n) for n in range((today - start).days + DAYS_AHEAD + 1)]


def upgrade() -> None:
    _set_aside(ATTEMPTS, ASIDE)
    _set_aside(DELIVERIES, ASIDE)
    op.create_table(DELIVERIES, *_delivery_columns(), postgresql_partition_by="RANGE (id)")
    op.create_index(
        "ix_webhook_deliveries_due", DELIVERIES, ["next_attempt_at"],
        postgresql_where=sa.text("next_attempt_at IS NOT NULL"),
    )  # fmt: skip
    op.create_index("ix_webhook_deliveries_endpoint_id_id", DELIVERIES, ["endpoint_id", "id"])
    op.create_index("ix_webhook_deliveries_event_id", DELIVERIES, ["event_id"])
    op.create_table(
        ATTEMPTS,
        *_attempt_columns(),
        sa.PrimaryKeyConstraint("id", "delivery_id", name="pk_webhook_delivery_attempts"),
        postgresql_partition_by="RANGE (delivery_id)",
    )
    bind = op.get_bind()
    partitions.create_schema_and_defaults(bind)
    partitions.ensure_days(bind, _days_to_create())
    _copy(DELIVERIES, DELIVERY_COLUMNS, f"{DELIVERIES}{ASIDE}")
    _copy(ATTEMPTS, ATTEMPT_COLUMNS, f"{ATTEMPTS}{ASIDE}")
    op.drop_table(f"{ATTEMPTS}{ASIDE}")
    op.drop_table(f"{DELIVERIES}{ASIDE}")


def downgrade() -> None:
    aside = "_partitioned"
    _set_aside(ATTEMPTS, aside)
    _set_aside(DELIVERIES, aside)
    op.create_table(DELIVERIES, *_delivery_columns())
    op.create_index(
        "ix_webhook_deliveries_due", DELIVERIES, ["next_attempt_at"],
        postgresql_where=sa.text("next_attempt_at IS NOT NULL"),
    )  # fmt: skip
    op.create_index("ix_webhook_deliveries_endpoint_id_id", DELIVERIES, ["endpoint_id", "id"])
    op.create_index("ix_webhook_deliveries_created_at", DELIVERIES, ["created_at"])
    op.create_index("ix_webhook_deliveries_event_id", DELIVERIES, ["event_id"])
    op.create_table(
        ATTEMPTS,
        *_attempt_columns(),
        sa.ForeignKeyConstraint(
            ["delivery_id"], ["webhook_deliveries.id"], ondelete="CASCADE",
            name="fk_webhook_delivery_attempts_delivery_id_webhook_deliveries",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_delivery_attempts"),
    )  # fmt: skip
    _copy(DELIVERIES, DELIVERY_COLUMNS, f"{DELIVERIES}{aside}")
    _copy(ATTEMPTS, ATTEMPT_COLUMNS, f"{ATTEMPTS}{aside}")
    op.drop_table(f"{ATTEMPTS}{aside}")  # with its partitions
    op.drop_table(f"{DELIVERIES}{aside}")
    op.execute(f"DROP SCHEMA {partitions.SCHEMA}")
