"""Every table module, imported so Alembic and the metadata see them all."""

from dps_api.db.models import (  # noqa: F401
    approvals,  # noqa: F401
    catalog,  # noqa: F401
    idempotency,  # noqa: F401
    identity,
    opportunities,  # noqa: F401
    outbox,
    quotes,  # noqa: F401
)
