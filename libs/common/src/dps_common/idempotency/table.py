"""The ``idempotency_keys`` table: its definition for a service's metadata, and the lightweight
table construct the store builds its statements on (bound to no service's metadata, so the same
statements run on every service's database)."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Index,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    TableClause,
    Text,
    Uuid,
    column,
    table,
)
from sqlalchemy.dialects.postgresql import JSONB

TABLE_NAME = "idempotency_keys"


def idempotency_table(metadata: MetaData) -> Table:
    """The table added to a service's own metadata (its models and migration checks see it).

    One row per organization, client (the API key that sent the request: ``client_key_id``) and
    key: the request it is bound to (method, path, body fingerprint), ``locked_until`` while that
    request runs (the lease), then the answer to replay, with its secret fields redacted (never a
    secret: ``dps_common.idempotency.redaction``)."""
    return Table(
        TABLE_NAME,
        metadata,
        Column("organization_id", Uuid(), nullable=False),
        Column("client_key_id", String(32), nullable=False),  # principal.key_id: keys are per client
        Column("key", String(255), nullable=False),
        Column("claim_id", Uuid(), nullable=False),  # the run that holds the row; a takeover changes it
        Column("request_method", String(8), nullable=False),
        Column("request_path", Text(), nullable=False),
        Column("request_fingerprint", String(64), nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("expires_at", DateTime(timezone=True), nullable=False),
        Column("locked_until", DateTime(timezone=True)),  # set while the request runs
        Column("response_status", SmallInteger()),  # set once it has answered
        Column("response_headers", JSONB()),
        Column("response_body", LargeBinary()),
        PrimaryKeyConstraint("organization_id", "client_key_id", "key", name="pk_idempotency_keys"),
        Index("ix_idempotency_keys_expires_at", "expires_at"),
    )


IDEMPOTENCY_KEYS: TableClause = table(
    TABLE_NAME,
    column("organization_id", Uuid()),
    column("client_key_id", String(32)),
    column("key", String(255)),
    column("claim_id", Uuid()),
    column("request_method", String(8)),
    column("request_path", Text()),
    column("request_fingerprint", String(64)),
    column("created_at", DateTime(timezone=True)),
    column("expires_at", DateTime(timezone=True)),
    column("locked_until", DateTime(timezone=True)),
    column("response_status", SmallInteger()),
    column("response_headers", JSONB()),
    column("response_body", LargeBinary()),
)
