"""The console's tables. Nothing secret is stored in the clear: links and session ids as SHA-256
hashes, the person's console credential sealed with AES-256-GCM (the session row's id as
associated data), a secret crossing a redirect sealed too, for at most a minute."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from dps_common.db import new_metadata


class Base(DeclarativeBase):
    metadata = new_metadata()


class SignInLink(Base):
    """A one-time sign-in link: single use, short-lived."""

    __tablename__ = "console_sign_in_links"

    token_hash: Mapped[bytes] = mapped_column(LargeBinary, primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ConsoleSession(Base):
    """A signed-in person's session. ``id`` is the sessionId the api ties the credential to; the
    browser's cookie holds another random value, of which only the hash is here."""

    __tablename__ = "console_sessions"

    id: Mapped[UUID] = mapped_column(primary_key=True)
    cookie_hash: Mapped[bytes] = mapped_column(LargeBinary, unique=True)
    email: Mapped[str] = mapped_column(String(320))
    person: Mapped[dict[str, Any]] = mapped_column(JSONB)  # the api's person: name, role, organization, ...
    credential_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    credential_key_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    notice: Mapped[str | None] = mapped_column(Text)  # the next page's one-line message (never a secret)


class RateCounter(Base):
    """Sign-in requests counted per bucket (an email's, a client address's) and fixed window."""

    __tablename__ = "console_rate_counters"

    bucket: Mapped[str] = mapped_column(String(400), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class FormResult(Base):
    """What one submitted form did, by its one-time token: a repeat of it (double click, reload,
    Back and submit) is sent where the first went instead of acting again. A secret the action
    answered waits here sealed (AES-256-GCM), for its page's first read and at most a minute."""

    __tablename__ = "console_form_results"

    session_id: Mapped[UUID] = mapped_column(ForeignKey("console_sessions.id", ondelete="CASCADE"), primary_key=True)
    form_token: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    location: Mapped[str | None] = mapped_column(Text)  # where the first submission went; None while it runs
    page: Mapped[dict[str, Any] | None] = mapped_column(JSONB)  # the once-shown page's words (never the secret)
    sealed: Mapped[bytes | None] = mapped_column(LargeBinary)  # the secret, until its first read
    sealed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)


class SignInRequest(Base):
    """A sign-in mail asked for, queued: a worker checks the email with the api and mails a link to
    a known person, retrying a mail server that fails (the request's answer never waits for either)."""

    __tablename__ = "console_sign_in_requests"

    id: Mapped[UUID] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    requested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    due_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)  # retry's or lease's end
    claim_token: Mapped[UUID | None] = mapped_column()
