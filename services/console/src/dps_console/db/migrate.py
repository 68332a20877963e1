"""This service's Alembic migrations, run programmatically (``dealpricing-console migrate``, tests)."""

from functools import partial

from dps_common import migrations

alembic_config = partial(migrations.alembic_config, "dps_console")
upgrade = partial(migrations.upgrade, "dps_console")
downgrade = partial(migrations.downgrade, "dps_console")
