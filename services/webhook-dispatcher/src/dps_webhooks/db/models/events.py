"""Events received from the api (and test events): one row per event id, which deduplicates."""

from datetime import datetime
from uuid import UUID

from sqlalchemy import Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from dps_webhooks.db.base import Base, defaults_to_now, timestamp


class WebhookEvent(Base):
    __tablename__ = "webhook_events"
    __table_args__ = (
        Index("ix_webhook_events_received_at", "received_at"),  # retention: the events past it
        # GET /events: the organization's newest first, all of them or of one type (keyset on both)
        Index("ix_webhook_events_organization_id_received_at_id", "organization_id", "received_at", "id"),
        Index("ix_webhook_events_organization_id_event_type", "organization_id", "event_type", "received_at", "id"),
    )

    id: Mapped[UUID] = mapped_column(primary_key=True)  # the envelope's id: X-Service-Event-Id, webhook-id
    organization_id: Mapped[UUID]
    event_type: Mapped[str] = mapped_column(String(64))
    occurred_at: Mapped[datetime] = timestamp()
    # the exact bytes every attempt sends and signs; NULL when over the 1 MB payload limit
    body: Mapped[str | None] = mapped_column(Text)
    body_bytes: Mapped[int]
    received_at: Mapped[datetime] = defaults_to_now()
    # the X-Request-Id of the request that caused the event (the message's header), for the logs
    request_id: Mapped[str | None] = mapped_column(String(128))
