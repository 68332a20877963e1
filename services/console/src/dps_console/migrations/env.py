"""Alembic environment of dps_console: every table of its metadata, migrated online."""

from dps_common.migrations import run_env

from dps_console.db.models import Base

run_env(Base.metadata)
