"""Alembic environment of dps_api: every table of its metadata, migrated online."""

from dps_common.migrations import run_env

from dps_api.db import models  # noqa: F401  (registers every table on the metadata)
from dps_api.db.base import Base

run_env(Base.metadata)
