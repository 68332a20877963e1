"""Alembic environment of dps_webhooks: every table of its metadata, migrated online."""

from dps_common.migrations import run_env

from dps_webhooks.db import models  # noqa: F401  (registers every table on the metadata)
from dps_webhooks.db.base import Base

run_env(Base.metadata)
