"""The ``outbox_events`` table: its definition for a service's metadata, and the lightweight table
construct the writer and the relay build their statements on (bound to no service's metadata, so
the same statements run on any database that has the table)."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Index,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    TableClause,
    Uuid,
    column,
    table,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

TABLE_NAME = "outbox_events"
OUTBOX_CHANNEL = "outbox_events"  # the relays LISTEN here; the table's statement trigger notifies it


def outbox_table(metadata: MetaData) -> Table:
    """The outbox table added to a service's own metadata (its models and migration checks see it)."""
    return Table(
        TABLE_NAME,
        metadata,
        Column("id", Uuid(), nullable=False),  # the envelope's event id
        Column("organization_id", Uuid(), nullable=False),
        Column("event_type", String(64), nullable=False),
        Column("occurred_at", DateTime(timezone=True), nullable=False),
        Column("envelope", JSONB(), nullable=False),
        Column("published_at", DateTime(timezone=True)),
        Column("request_id", String(128)),  # the recording request's X-Request-Id; the message's header
        PrimaryKeyConstraint("id", name="pk_outbox_events"),
        Index("ix_outbox_events_unpublished", "occurred_at", postgresql_where=text("published_at IS NULL")),
    )


OUTBOX: TableClause = table(
    TABLE_NAME,
    column("id", Uuid()),
    column("organization_id", Uuid()),
    column("event_type", String(64)),
    column("occurred_at", DateTime(timezone=True)),
    column("envelope", JSONB()),
    column("published_at", DateTime(timezone=True)),
    column("request_id", String(128)),
)
