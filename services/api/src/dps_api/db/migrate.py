"""This service's Alembic migrations, run programmatically (start-up, tests, ``make run``)."""

from functools import partial

from dps_common import migrations

alembic_config = partial(migrations.alembic_config, "dps_api")
upgrade = partial(migrations.upgrade, "dps_api")
downgrade = partial(migrations.downgrade, "dps_api")
