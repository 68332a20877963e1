"""The idempotency table in a service's Alembic migrations, written once for every service that keeps
it (the api, the dispatcher, the connector): a service's revision names its ids and takes its
``upgrade`` and ``downgrade`` from here, e.g.::

    from dps_common.idempotency.migration import drop_table as downgrade, add_table as upgrade

``add_table``/``drop_table`` for the revision that adds the table, ``scope_by_client``/
``unscope_by_client`` for the one that scopes its keys by client. ``create_idempotency_keys(op)`` and
the other helpers taking ``op`` run the same statements on any ``Operations`` (the shared table's own
tests).

The statements are written out here, not derived from ``idempotency_table``, so a migration that
calls them creates what it created when it was written; each service's migration checks compare the
result with its models (which use ``idempotency_table``)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op as alembic_op
from sqlalchemy.dialects import postgresql

from dps_common.idempotency.table import TABLE_NAME
from dps_common.outbox.migration import MigrationOps


def create_idempotency_keys(op: MigrationOps) -> None:
    op.create_table(
        TABLE_NAME,
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("claim_id", sa.Uuid(), nullable=False),
        sa.Column("request_method", sa.String(8), nullable=False),
        sa.Column("request_path", sa.Text(), nullable=False),
        sa.Column("request_fingerprint", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True)),
        sa.Column("response_status", sa.SmallInteger()),
        sa.Column("response_headers", postgresql.JSONB()),
        sa.Column("response_body", sa.LargeBinary()),
        sa.PrimaryKeyConstraint("organization_id", "key", name="pk_idempotency_keys"),
    )
    op.create_index("ix_idempotency_keys_expires_at", TABLE_NAME, ["expires_at"])


def drop_idempotency_keys(op: MigrationOps) -> None:
    op.drop_index("ix_idempotency_keys_expires_at", table_name=TABLE_NAME)
    op.drop_table(TABLE_NAME)


# 0008 (api) / 0003 (dispatcher, connector): a key is scoped to the client (the API key) that sent
# it, as in the IETF draft, so the client's id joins the primary key. The rows kept until then are
# deleted: their client is unknown, and an answer that carried a secret was kept in plaintext (a
# retry of a request answered before the upgrade runs it again, as after 24 hours).
_SCOPE_BY_CLIENT = (
    f"DELETE FROM {TABLE_NAME}",
    f"ALTER TABLE {TABLE_NAME} "
    "ADD COLUMN client_key_id VARCHAR(32) NOT NULL, "
    "DROP CONSTRAINT pk_idempotency_keys, "
    "ADD CONSTRAINT pk_idempotency_keys PRIMARY KEY (organization_id, client_key_id, key)",
)
_UNSCOPE_BY_CLIENT = (
    f"DELETE FROM {TABLE_NAME}",  # two clients' rows under one key would collide
    f"ALTER TABLE {TABLE_NAME} "
    "DROP CONSTRAINT pk_idempotency_keys, "
    "DROP COLUMN client_key_id, "
    "ADD CONSTRAINT pk_idempotency_keys PRIMARY KEY (organization_id, key)",
)


def scope_idempotency_keys_by_client(op: MigrationOps) -> None:
    for statement in _SCOPE_BY_CLIENT:
        op.execute(statement)


def unscope_idempotency_keys_by_client(op: MigrationOps) -> None:
    for statement in _UNSCOPE_BY_CLIENT:
        op.execute(statement)


# --- the revisions' bodies (Alembic calls them without arguments, within the running migration) ---


def add_table() -> None:
    create_idempotency_keys(alembic_op)


def drop_table() -> None:
    drop_idempotency_keys(alembic_op)


def scope_by_client() -> None:
    scope_idempotency_keys_by_client(alembic_op)


def unscope_by_client() -> None:
    unscope_idempotency_keys_by_client(alembic_op)
