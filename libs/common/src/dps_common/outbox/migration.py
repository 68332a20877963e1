"""The outbox in a service's Alembic migrations: ``create_outbox(op)`` in its first migration (the
table, its index of unpublished rows and the notify trigger), ``drop_outbox(op)`` in its downgrade.

The statements are written out here, not derived from ``outbox_table``, so a migration that calls
them creates what it created when it was written; a test checks the two agree."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.operations import Operations
from sqlalchemy.dialects import postgresql

from dps_common.outbox.table import OUTBOX_CHANNEL, TABLE_NAME

# Per statement, not per row: one notification per insert is enough, and PostgreSQL folds repeats
# within a transaction anyway. NOTIFY is transactional: delivered at commit, never for a rollback.
# The text (whitespace included) is what the api's migration 0006 has always created.
_CREATE_NOTIFY_FUNCTION = f"""
        CREATE FUNCTION notify_outbox_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{OUTBOX_CHANNEL}', '');
            RETURN NULL;
        END
        $$
        """
_CREATE_NOTIFY_TRIGGER = (
    "CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events "
    "FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox_events()"
)


def create_notify_trigger(op: Operations) -> None:
    """The statement trigger that wakes the relays (``LISTEN outbox_events``) at each commit of events."""
    op.execute(_CREATE_NOTIFY_FUNCTION)
    op.execute(_CREATE_NOTIFY_TRIGGER)


def drop_notify_trigger(op: Operations) -> None:
    op.execute("DROP TRIGGER outbox_events_notify ON outbox_events")
    op.execute("DROP FUNCTION notify_outbox_events()")


def create_outbox(op: Operations) -> None:
    op.create_table(
        TABLE_NAME,
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("envelope", postgresql.JSONB(), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name="pk_outbox_events"),
    )
    op.create_index(
        "ix_outbox_events_unpublished",
        TABLE_NAME,
        ["occurred_at"],
        postgresql_where=sa.text("published_at IS NULL"),
    )
    create_notify_trigger(op)


def drop_outbox(op: Operations) -> None:
    drop_notify_trigger(op)
    op.drop_index("ix_outbox_events_unpublished", table_name=TABLE_NAME)
    op.drop_table(TABLE_NAME)
