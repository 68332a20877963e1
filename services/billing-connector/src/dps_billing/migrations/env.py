"""Alembic environment of dps_billing: every table of its metadata, migrated online."""

from dps_common.migrations import run_env

from dps_billing.db import models  # noqa: F401  (registers every table on the metadata)
from dps_billing.db.base import Base

run_env(Base.metadata)
