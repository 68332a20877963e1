"""The checks every service runs on its own Alembic tree: the migrated schema is exactly the models,
the constraint names follow the shared naming convention, and the chain goes down to nothing and
up again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pprint import pformat

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import Engine, MetaData, create_engine, text

from dps_common import migrations
from dps_common.db import make_engine, sqlalchemy_url
from dps_testing.services import fresh_database

# Everything a migration can leave in the public schema, the Alembic bookkeeping table aside:
# relations (tables, views, sequences, indexes), functions (a trigger's too), and types of their own.
_LEFTOVERS = text(
    """
    SELECT format('%s (relkind %s)', c.relname, c.relkind) FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relname NOT IN ('alembic_version', 'alembic_version_pkc')
    UNION ALL
    SELECT format('%s()', p.proname) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'public'
    UNION ALL
    SELECT format('type %s', t.typname) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'r', 'm')
    ORDER BY 1
    """
)
_CONSTRAINT_NAMES = text(
    "SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
    " WHERE n.nspname = 'public' AND conname <> 'alembic_version_pkc' ORDER BY 1"
)
_CONVENTION_PREFIXES = {"pk", "fk", "uq", "ck"}


def schema_differences(engine: Engine, metadata: MetaData) -> list[object]:
    """What Alembic's autogenerate would write to turn the database's schema into ``metadata``'s
    (column types compared too); empty when migrations and models agree."""
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))


def assert_schema_matches_models(engine: Engine, metadata: MetaData) -> None:
    differences = schema_differences(engine, metadata)
    if differences:
        pytest.fail(
            "the migrated schema differs from the models (a migration is missing or wrong):\n"
            + pformat(differences),
            pytrace=False,
        )


def misnamed_constraints(engine: Engine) -> list[str]:
    """Constraints whose name does not start with the convention's prefix, or carries it twice (a
    name given by hand that the convention prefixed again)."""
    with engine.connect() as connection:
        names = list(connection.execute(_CONSTRAINT_NAMES).scalars())
    if not names:
        return ["(no constraint at all: is the database migrated?)"]
    wrong = []
    for name in names:
        prefix = name.split("_", 1)[0]
        if prefix not in _CONVENTION_PREFIXES or f"_{prefix}_" in name:
            wrong.append(name)
    return wrong


def leftovers(engine: Engine) -> list[str]:
    """What is in the public schema besides Alembic's own table."""
    with engine.connect() as connection:
        return list(connection.execute(_LEFTOVERS).scalars())


def assert_round_trip(package: str, metadata: MetaData) -> None:
    """On a fresh database: upgrade to head, downgrade to base (nothing may be left), upgrade to
    head again (the schema must still be the models)."""
    with fresh_database(f"{package}_roundtrip") as url:
        migrations.upgrade(package, url)
        migrations.downgrade(package, url, "base")
        engine = make_engine(url, pool_size=1, application_name="dps-migration-checks")
        try:
            left = leftovers(engine)
            if left:
                pytest.fail(f"downgrade to base left {left}", pytrace=False)
            migrations.upgrade(package, url)
            assert_schema_matches_models(engine, metadata)
        finally:
            engine.dispose()


@contextmanager
def migrated(database_url: str, migration: Callable[[Operations], None]) -> Iterator[None]:
    """Run one migration step (e.g. ``create_outbox``) on the database as Alembic would, without a
    migrations tree: for the shared tables' own tests."""
    engine = create_engine(sqlalchemy_url(database_url))
    try:
        with engine.begin() as connection:
            migration(Operations(MigrationContext.configure(connection)))
        yield
    finally:
        engine.dispose()
