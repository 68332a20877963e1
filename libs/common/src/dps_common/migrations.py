"""Each service's own Alembic tree, run programmatically (start-up, tests, ``make run``).

A service keeps ``alembic.ini`` and ``migrations/`` in its package; its ``migrations/env.py`` calls
``run_env(Base.metadata)`` and its ``db/migrate.py`` binds ``upgrade``/``downgrade`` to its package.
"""

from __future__ import annotations

import os
from importlib.resources import files

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData, create_engine

from dps_common.db import sqlalchemy_url
from dps_common.settings import DatabaseSettings


def alembic_config(package: str, database_url: str) -> Config:
    config = Config(str(files(package) / "alembic.ini"))
    config.set_main_option("script_location", str(files(package) / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(package: str, database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(package, database_url), revision)


def upgrade_from_env(package: str) -> None:
    """``<service> migrate``: upgrade the database DATABASE_URL names (``SettingsError`` when it is
    missing or not PostgreSQL)."""
    upgrade(package, DatabaseSettings.from_env().database_url)


def downgrade(package: str, database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(package, database_url), revision)


def run_env(metadata: MetaData) -> None:
    """The body of a ``migrations/env.py``: migrate the database named by ``sqlalchemy.url`` or
    DATABASE_URL, online, comparing column types."""
    config = context.config
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not url:
        raise SystemExit("DATABASE_URL is required to run migrations")
    engine = create_engine(sqlalchemy_url(url))
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
