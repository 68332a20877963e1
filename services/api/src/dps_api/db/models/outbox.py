"""The api's event outbox: the shared ``outbox_events`` table (``dps_common.outbox``) on the api's
metadata, mapped for reading rows in tests and tools; events are written with ``record_event``."""

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy.orm import Mapped

from dps_common.outbox import outbox_table

from dps_api.db.base import Base


class OutboxEvent(Base):
    __table__ = outbox_table(Base.metadata)

    id: Mapped[UUID]  # the envelope's event id
    organization_id: Mapped[UUID]
    event_type: Mapped[str]
    occurred_at: Mapped[datetime]
    envelope: Mapped[dict[str, Any]]
    published_at: Mapped[datetime | None]
