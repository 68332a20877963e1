"""Alembic environment: migrates the database named by the ``sqlalchemy.url`` option or DATABASE_URL."""

import os

from alembic import context
from sqlalchemy import create_engine

from dps_common.db import sqlalchemy_url

from dps_api.db import models  # noqa: F401  (registers every table on the metadata)
from dps_api.db.base import Base

config = context.config
url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
if not url:
    raise SystemExit("DATABASE_URL is required to run migrations")

engine = create_engine(sqlalchemy_url(url))
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
