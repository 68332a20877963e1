"""Every table module, imported so Alembic and the metadata see them all."""

from dps_api.db.models import identity, outbox  # noqa: F401
from dps_api.db.models import opportunities  # noqa: F401
from dps_api.db.models import catalog  # noqa: F401
from dps_api.db.models import quotes  # noqa: F401
from dps_api.db.models import approvals  # noqa: F401
