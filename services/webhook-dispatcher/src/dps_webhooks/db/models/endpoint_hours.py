"""An endpoint's attempts counted per hour (``GET /webhook-configs/{id}/stats``), kept as they are
recorded so that a week's chart reads 168 small rows instead of every attempt of the week.

Whoever inserts an attempt counts it, in the same transaction: the recording's statement adds its
batch's attempts (``services/recording.py``), which carry their ``endpoint_id``; an insert that names
no endpoint (a test's or a bench's seeding, the previous version's workers during migration 0008)
has ``FILL_FUNCTION``, a row trigger whose ``WHEN`` skips every other row, look it up and count the
attempt. A statement trigger counting every insert cost the recording 170-210 µs of backend CPU a
batch (bench/endpoint_stats.py); the count inside the recording's own statement costs it far less.
Moving rows between partitions (``db/partitions.py``: ``_adopt``) copies them with their endpoint, so
nothing is counted twice.

Each row is also keyed by the day of the attempts' deliveries (their UUIDv7 id's, the partition's
day): retention drops a day's partitions and that day's rows here with them (``drop_day``), so the
counts are always those of the attempts the history still holds.
"""

from datetime import date, datetime
from uuid import UUID

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, Index
from sqlalchemy.orm import Mapped, mapped_column

from dps_webhooks.db.base import Base

# an attempt that succeeded (a 2xx answered in time); anything else failed (SQL on the attempt's columns)
ATTEMPT_SUCCEEDED = "coalesce(response_status BETWEEN 200 AND 299, false) AND error_message IS NULL"
# an attempt inserted without its endpoint (a seeding, not the recording): its delivery's, and counted
FILL_FUNCTION = "webhook_attempt_endpoint_id"
FILL_TRIGGER = "tr_webhook_delivery_attempts_endpoint_id"


class EndpointHour(Base):
    __tablename__ = "webhook_endpoint_hours"
    __table_args__ = (
        CheckConstraint("succeeded >= 0 AND failed >= 0", name="counts"),
        Index("ix_webhook_endpoint_hours_delivery_day", "delivery_day"),  # retention: a day's rows
    )

    endpoint_id: Mapped[UUID] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), primary_key=True
    )
    hour: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)  # the attempts' hour (UTC)
    delivery_day: Mapped[date] = mapped_column(primary_key=True)  # their deliveries' day (UTC)
    succeeded: Mapped[int]
    failed: Mapped[int]
