"""Alembic is the only way the schema changes: the migrated schema is exactly the models, and the
chain goes down to nothing (no table, no function left) and up again."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from dps_common.db import make_engine
from dps_common.testing.services import fresh_database

from dps_api.db import models  # noqa: F401  (every table on the metadata)
from dps_api.db.base import Base
from dps_api.db.migrate import downgrade, upgrade


def test_migrated_schema_matches_the_models(engine):
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_constraint_names_follow_the_naming_convention_once(engine):
    with engine.connect() as connection:
        names = connection.execute(
            text("SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE nspname = 'public'")
        ).scalars().all()
    ours = [n for n in names if n != "alembic_version_pkc"]
    assert ours
    for name in ours:
        prefix = name.split("_", 1)[0]
        assert prefix in {"pk", "fk", "uq", "ck"}, name
        assert f"_{prefix}_" not in name, f"{name}: the convention's prefix applied twice"


def test_the_chain_downgrades_to_nothing_and_upgrades_again():
    with fresh_database("dps_api_migrations") as url:
        upgrade(url)
        downgrade(url, "base")
        engine = make_engine(url)
        with engine.connect() as connection:
            tables = connection.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'")
            ).scalars().all()
            functions = connection.execute(
                text("SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE nspname = 'public'")
            ).scalars().all()
        engine.dispose()
        assert tables == []
        assert functions == []  # the outbox's trigger function too
        upgrade(url)
