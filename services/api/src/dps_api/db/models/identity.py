"""Organizations, users and API keys."""

from datetime import datetime
from enum import StrEnum
from uuid import UUID

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column

from dps_api.db.base import Base, created_at, uuid_pk


class KeyStatus(StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"


class KeyKind(StrEnum):
    INTEGRATION = "integration"  # issued to an integration (the admin CLI, the console's API keys page)
    CONSOLE = "console"  # the settings console's credential for a signed-in person; always expires


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = created_at()


class User(Base):
    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("organization_id", "email"),)

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    email: Mapped[str] = mapped_column(String(320))
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))  # the user's dps_common Role: admin, user, view only
    # granted by an admin: the person may manage their own API keys in the console (admins always may)
    api_key_access: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = created_at()


# sign-in finds a person by email in any organization, ignoring case
Index("ix_users_email_lower", func.lower(User.email))


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (
        CheckConstraint("kind IN ('integration', 'console')", name="kind"),
        CheckConstraint("kind = 'integration' OR expires_at IS NOT NULL", name="console_expires"),
    )

    id: Mapped[UUID] = uuid_pk()
    organization_id: Mapped[UUID] = mapped_column(ForeignKey("organizations.id"), index=True)
    user_id: Mapped[UUID] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))  # a dps_common Role
    # the public part of the key; rotation issues a new one so caches keyed on it cannot serve the old secret
    key_id: Mapped[str] = mapped_column(String(32), unique=True)
    secret_hash: Mapped[bytes] = mapped_column(LargeBinary(32))
    status: Mapped[str] = mapped_column(String(10), default=KeyStatus.ACTIVE.value)  # a KeyStatus
    kind: Mapped[str] = mapped_column(
        String(20), default=KeyKind.INTEGRATION.value, server_default=KeyKind.INTEGRATION.value
    )  # a KeyKind
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # refused from then on
    created_at: Mapped[datetime] = created_at()
    rotated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
