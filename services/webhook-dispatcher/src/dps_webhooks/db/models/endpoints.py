"""Webhook endpoints (``/webhook-configs``): where an organization's events are delivered."""

from datetime import datetime
from uuid import UUID

from sqlalchemy import CheckConstraint, Index, LargeBinary, String, Text, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from dps_webhooks.db.base import Base, defaults_to_now, timestamp, uuid_pk


class WebhookEndpoint(Base):
    __tablename__ = "webhook_endpoints"
    __table_args__ = (
        CheckConstraint("status IN ('ACTIVE', 'PAUSED', 'DISABLED')", name="status"),
        CheckConstraint("consecutive_failures >= 0", name="consecutive_failures"),
        CheckConstraint(
            "rate_limit_per_second IS NULL OR rate_limit_per_second BETWEEN 1 AND 1000", name="rate_limit_per_second"
        ),
        Index("ix_webhook_endpoints_organization_id_id", "organization_id", "id"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID]
    url: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text, server_default="")
    # the event types delivered here; empty means every type
    event_types: Mapped[list[str]] = mapped_column(ARRAY(String(64)), server_default=text("'{}'"))
    status: Mapped[str] = mapped_column(String(16))
    # at most this many requests a second, counted across every delivery worker; NULL: no limit
    rate_limit_per_second: Mapped[int | None]
    consecutive_failures: Mapped[int] = mapped_column(server_default="0")
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    # the whsec_ signing secret, AES-GCM sealed with the row id as associated data
    secret_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    secret_rotated_at: Mapped[datetime | None] = timestamp()
    revoked_at: Mapped[datetime | None] = timestamp()
    created_at: Mapped[datetime] = defaults_to_now()
    updated_at: Mapped[datetime] = defaults_to_now()
