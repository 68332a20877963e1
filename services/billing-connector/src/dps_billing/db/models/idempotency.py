"""The connector's idempotency keys: the shared ``idempotency_keys`` table
(``dps_common.idempotency``) on its metadata; the middleware reads and writes it through
``IdempotencyStore``."""

from sqlalchemy import Table

from dps_common.idempotency import idempotency_table

from dps_billing.db.base import Base

IDEMPOTENCY_KEYS: Table = idempotency_table(Base.metadata)
