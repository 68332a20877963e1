"""Alembic environment of dps_console: every table of its metadata, migrated online."""

from dps_console.db.models import Base

from dps_common.migrations import run_env

run_env(Base.metadata)
