"""The billing platform connection of an organization (spec section 3), the authorize states handed
out for it, and the platform's webhook events already processed."""

from datetime import datetime
from uuid import UUID

from sqlalchemy import CheckConstraint, Index, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from dps_billing.db.base import Base, defaults_to_now, timestamp, uuid_pk


class BillingConnection(Base):
    """At most one per organization. The tokens exist only AES-GCM sealed, with the row id as
    associated data; deleting the row erases them."""

    __tablename__ = "billing_connections"
    __table_args__ = (
        UniqueConstraint("organization_id"),
        CheckConstraint("status IN ('connected', 'broken')", name="status"),
        Index("ix_billing_connections_account_id", "account_id"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID]
    account_id: Mapped[str] = mapped_column(String(255))
    livemode: Mapped[bool]
    status: Mapped[str] = mapped_column(String(16))
    broken_reason: Mapped[str | None] = mapped_column(Text)
    connected_by: Mapped[UUID]  # the admin user who completed the authorization
    connected_at: Mapped[datetime] = timestamp()
    access_token_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    refresh_token_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    # the platform sends no expires_in: access tokens last an hour from their grant
    access_expires_at: Mapped[datetime] = timestamp()
    refreshed_at: Mapped[datetime | None] = timestamp()
    updated_at: Mapped[datetime] = defaults_to_now()


class OAuthState(Base):
    """One connect flow. ``POST /billing-connection/authorize`` makes it with a start ticket (only its
    SHA-256 is kept), which one browser redeems once at ``GET /billing-connection/start``: that sets
    the browser's nonce cookie (only its SHA-256 is kept here, and in the signed ``state``). The
    callback consumes the row exactly once, and only from the browser holding the nonce."""

    __tablename__ = "billing_oauth_states"
    __table_args__ = (
        Index("ix_billing_oauth_states_expires_at", "expires_at"),
        Index("ix_billing_oauth_states_ticket_hash", "ticket_hash", unique=True),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID]
    user_id: Mapped[UUID]
    livemode: Mapped[bool]
    expires_at: Mapped[datetime] = timestamp()
    consumed_at: Mapped[datetime | None] = timestamp()
    ticket_hash: Mapped[bytes | None] = mapped_column(LargeBinary)
    ticket_expires_at: Mapped[datetime | None] = timestamp()
    started_at: Mapped[datetime | None] = timestamp()  # the ticket was redeemed by a browser
    nonce_hash: Mapped[bytes | None] = mapped_column(LargeBinary)
    return_url: Mapped[str | None] = mapped_column(Text)  # the console page the browser goes back to
    created_at: Mapped[datetime] = defaults_to_now()


class PlatformEvent(Base):
    """A platform webhook event processed: a replay of its id changes nothing."""

    __tablename__ = "billing_platform_events"
    __table_args__ = (Index("ix_billing_platform_events_received_at", "received_at"),)

    id: Mapped[str] = mapped_column(String(255), primary_key=True)  # evt_...
    event_type: Mapped[str] = mapped_column(String(128))
    account_id: Mapped[str | None] = mapped_column(String(255))
    received_at: Mapped[datetime] = defaults_to_now()
