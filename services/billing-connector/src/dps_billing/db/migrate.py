"""This service's Alembic migrations, run programmatically (``dealpricing-billing migrate``, tests)."""

from functools import partial

from dps_common import migrations

alembic_config = partial(migrations.alembic_config, "dps_billing")
upgrade = partial(migrations.upgrade, "dps_billing")
downgrade = partial(migrations.downgrade, "dps_billing")
