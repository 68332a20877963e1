"""The outbox in a service's Alembic migrations: ``create_outbox(op)`` in its first migration (the
table, its index of unpublished rows and the notify trigger), ``drop_outbox(op)`` in its downgrade;
later steps each in a migration of every service that owns an outbox (the api, the connector):
``add_request_id(op)`` / ``drop_request_id(op)``. ``create_outbox_current(op)`` runs every step, for
the shared table's own tests.

The statements are written out here, not derived from ``outbox_table``, so a migration that calls
them creates what it created when it was written; a test checks the two agree."""

from __future__ import annotations

from typing import Any, Protocol

import sqlalchemy as sa
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


class MigrationOps(Protocol):
    """What these helpers use of Alembic's operations: ``alembic.op`` in a migration (a module that
    proxies the running migration's ``Operations``) or an ``Operations`` object."""

    def execute(self, sqltext: Any, *, execution_options: Any = None) -> None: ...
    def create_table(self, table_name: str, *columns: Any, **kw: Any) -> Any: ...
    def create_index(self, index_name: str | None, table_name: str, columns: Any, **kw: Any) -> None: ...
    def drop_index(self, index_name: str, table_name: str | None = None, **kw: Any) -> None: ...
    def drop_table(self, table_name: str, **kw: Any) -> None: ...
    def add_column(self, table_name: str, column: Any) -> None: ...
    def drop_column(self, table_name: str, column_name: str, **kw: Any) -> None: ...


def create_notify_trigger(op: MigrationOps) -> None:
    """The statement trigger that wakes the relays (``LISTEN outbox_events``) at each commit of events."""
    op.execute(_CREATE_NOTIFY_FUNCTION)
    op.execute(_CREATE_NOTIFY_TRIGGER)


def drop_notify_trigger(op: MigrationOps) -> None:
    op.execute("DROP TRIGGER outbox_events_notify ON outbox_events")
    op.execute("DROP FUNCTION notify_outbox_events()")


def create_outbox(op: MigrationOps) -> None:
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


def drop_outbox(op: MigrationOps) -> None:
    drop_notify_trigger(op)
    op.drop_index("ix_outbox_events_unpublished", table_name=TABLE_NAME)
    op.drop_table(TABLE_NAME)


def add_request_id(op: MigrationOps) -> None:
    """The request id of the request that recorded each event (NULL: none, e.g. a worker's event),
    which the relay publishes as the message header ``X-Request-Id``."""
    op.add_column(TABLE_NAME, sa.Column("request_id", sa.String(128)))


def drop_request_id(op: MigrationOps) -> None:
    op.drop_column(TABLE_NAME, "request_id")


def create_outbox_current(op: MigrationOps) -> None:
    """Every step above, in order: the table as ``outbox_table`` describes it today."""
    create_outbox(op)
    add_request_id(op)
