"""Deliveries (one event to one endpoint) and their attempts.

The work queue is this table: a delivery is due when ``next_attempt_at`` has passed. Workers claim
due rows with ``FOR UPDATE SKIP LOCKED`` and push ``next_attempt_at`` one lease ahead, so a worker
that dies mid-attempt leaves the row to be taken up when the lease ends. ``next_attempt_at`` is NULL
when nothing is scheduled: the delivery is final (SUCCESS, EXHAUSTED) or held (its endpoint is
paused or disabled; resuming schedules it again).

Both tables are partitioned by day on the delivery's UUIDv7 id (``db/partitions.py``: deliveries on
``id``, attempts on ``delivery_id``); retention drops a day's partitions whole. The attempts' foreign
key to their delivery is declared per day's partition pair, not here on the parents (see there why).
"""

from datetime import datetime
from uuid import UUID

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from dps_webhooks.db.base import Base, defaults_to_now, timestamp, uuid_pk


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        CheckConstraint("status IN ('PENDING', 'SUCCESS', 'FAILED', 'EXHAUSTED')", name="status"),
        CheckConstraint(
            "next_attempt_at IS NULL OR status IN ('PENDING', 'FAILED')", name="final_is_unscheduled"
        ),
        Index("ix_webhook_deliveries_due", "next_attempt_at", postgresql_where=text("next_attempt_at IS NOT NULL")),
        Index("ix_webhook_deliveries_endpoint_id_id", "endpoint_id", "id"),  # newest first per endpoint
        Index("ix_webhook_deliveries_event_id", "event_id"),  # retention: events no delivery uses
        # an endpoint's time to success over a window (db/endpoint_stats.py), read index-only: an entry
        # a delivery, made when it succeeds (that update is never HOT anyway: next_attempt_at is indexed)
        Index(
            "ix_webhook_deliveries_endpoint_id_succeeded",
            "endpoint_id", "completed_at",
            postgresql_include=["id", "created_at", "last_attempted_at", "last_duration_ms"],
            postgresql_where=text("status = 'SUCCESS'"),
        ),  # fmt: skip
        {"postgresql_partition_by": "RANGE (id)"},
    )

    id: Mapped[UUID] = uuid_pk()  # UUIDv7: newest first is id order; the partition key (its day)
    organization_id: Mapped[UUID]
    endpoint_id: Mapped[UUID] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    event_id: Mapped[UUID] = mapped_column(ForeignKey("webhook_events.id", ondelete="CASCADE"))
    event_type: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    is_test: Mapped[bool] = mapped_column(server_default="false")
    retry_of: Mapped[UUID | None]  # the delivery a manual retry redelivers
    attempt_count: Mapped[int] = mapped_column(server_default="0")
    next_attempt_at: Mapped[datetime | None] = timestamp()
    claim_token: Mapped[UUID | None]  # the worker lease that may record the current attempt
    last_response_status: Mapped[int | None]
    last_response_excerpt: Mapped[str | None] = mapped_column(Text)
    last_error_message: Mapped[str | None] = mapped_column(Text)
    last_duration_ms: Mapped[int | None]
    last_attempted_at: Mapped[datetime | None] = timestamp()
    completed_at: Mapped[datetime | None] = timestamp()
    created_at: Mapped[datetime] = defaults_to_now()


class DeliveryAttempt(Base):
    __tablename__ = "webhook_delivery_attempts"
    __table_args__ = (
        UniqueConstraint("delivery_id", "attempt", name="uq_webhook_delivery_attempts_attempt"),
        {"postgresql_partition_by": "RANGE (delivery_id)"},
    )

    id: Mapped[UUID] = uuid_pk()
    # the partition key, so part of the primary key (id, delivery_id); references webhook_deliveries.id
    # through each day's partitions (ON DELETE CASCADE)
    delivery_id: Mapped[UUID] = mapped_column(primary_key=True)
    # The delivery's endpoint, for the trigger that counts the attempts per endpoint and hour
    # (db/models/endpoint_hours.py) without a join: written by the recording's insert, filled in from
    # the delivery for an insert that names none. NULL on the attempts recorded before migration 0008.
    endpoint_id: Mapped[UUID | None]
    attempt: Mapped[int]
    attempted_at: Mapped[datetime] = timestamp()
    response_status: Mapped[int | None]
    response_excerpt: Mapped[str | None] = mapped_column(Text)
    error_message: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int]
    # the request's signing as sent (Standard Webhooks): the portal shows the request exactly so
    webhook_timestamp: Mapped[int | None] = mapped_column(BigInteger)
    webhook_signature: Mapped[str | None] = mapped_column(Text)
