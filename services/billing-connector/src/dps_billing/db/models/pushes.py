"""Push jobs, the objects they create on the platform, and the per-account pacing slots.

The work queue is ``billing_pushes``: a push is claimable while ``queued``, or ``running`` with its
lease ended (its worker died). At most one push per quote is queued or running (a partial unique
index), so concurrent requests cannot start two. Queuing a push notifies ``PUSHES_CHANNEL``.

``billing_push_objects`` holds one row per object a push creates: written as an intent (key and
``sent_at``) before the call, completed with the platform's id as soon as it is returned, each in its
own short transaction. A resumed push skips what has an id, and reconciles an intent without one.
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from dps_billing.db.base import Base, defaults_to_now, timestamp, uuid_pk

ACTIVE = "status IN ('queued', 'running')"
# A push queued (requested, or given back by a stopping worker) notifies this channel at commit; the
# workers LISTEN on it (``dps_common.work_queue``) and claim at once instead of at their next poll.
PUSHES_CHANNEL = "billing_pushes"


class BillingPush(Base):
    __tablename__ = "billing_pushes"
    __table_args__ = (
        CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed')", name="status"),
        Index("ix_billing_pushes_organization_id_quote_id_id", "organization_id", "quote_id", "id"),
        Index("ix_billing_pushes_organization_id_id", "organization_id", "id"),
        Index(
            "ix_billing_pushes_one_active_per_quote",
            "organization_id",
            "quote_id",
            unique=True,
            postgresql_where=text(ACTIVE),
        ),
        Index("ix_billing_pushes_claimable", "lease_until", postgresql_where=text(ACTIVE)),
    )

    id: Mapped[UUID] = uuid_pk()  # UUIDv7: newest first is id order
    organization_id: Mapped[UUID]
    quote_id: Mapped[UUID]
    requested_by: Mapped[UUID]
    status: Mapped[str] = mapped_column(String(16))
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSONB)  # the approved quote as it was at the request
    planned_at: Mapped[datetime | None] = timestamp()  # the plan's "now": the same plan on every resume
    lines_total: Mapped[int] = mapped_column(server_default="0")
    products_created: Mapped[int] = mapped_column(server_default="0")
    prices_created: Mapped[int] = mapped_column(server_default="0")
    quote_created: Mapped[bool] = mapped_column(server_default="false")
    warnings: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, server_default=text("'[]'::jsonb"))
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(Text)
    error_param: Mapped[str | None] = mapped_column(Text)
    billing_quote_id: Mapped[str | None] = mapped_column(String(255))
    review_url: Mapped[str | None] = mapped_column(Text)
    lease_until: Mapped[datetime | None] = timestamp()
    claim_token: Mapped[UUID | None]
    claims: Mapped[int] = mapped_column(server_default="0")
    created_at: Mapped[datetime] = defaults_to_now()
    updated_at: Mapped[datetime] = defaults_to_now()
    finished_at: Mapped[datetime | None] = timestamp()
    # the X-Request-Id of the request that queued the push: bound while a worker runs it (its log
    # lines, and the outbox rows of the billing.* events it records)
    request_id: Mapped[str | None] = mapped_column(String(128))


class PushObject(Base):
    __tablename__ = "billing_push_objects"
    __table_args__ = (
        UniqueConstraint("push_id", "line_id", "kind"),
        CheckConstraint("kind IN ('product', 'price', 'quote')", name="kind"),
    )

    id: Mapped[UUID] = uuid_pk()
    push_id: Mapped[UUID] = mapped_column(ForeignKey("billing_pushes.id", ondelete="CASCADE"))
    line_id: Mapped[str] = mapped_column(String(64))  # the quote line; '' for the billing quote
    kind: Mapped[str] = mapped_column(String(16))
    position: Mapped[int]  # the line's place in the plan
    generation: Mapped[int] = mapped_column(server_default="0")  # bumped when a lost create is made anew
    idempotency_key: Mapped[str] = mapped_column(String(255))
    sent_at: Mapped[datetime] = timestamp()  # the intent: a call with this key was (about to be) made
    platform_id: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = defaults_to_now()


class PacerSlot(Base):
    """The next free call slot of one platform account, shared by every worker of every replica."""

    __tablename__ = "billing_pacer_slots"

    account_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    next_slot: Mapped[datetime] = timestamp()
    turns: Mapped[int] = mapped_column(BigInteger, server_default="0")  # the sequence of its turns


class PacerTurn(Base):
    """One paced call of an account: its place in the account's sequence, its planned start and when
    it ended (NULL while it runs). ``dps_billing.adapters.billing_platform.postgres_pacer`` reads the ends of the turns one
    rate's worth back before a call starts."""

    __tablename__ = "billing_pacer_turns"

    account_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    planned_at: Mapped[datetime] = timestamp()
    done_at: Mapped[datetime | None] = timestamp()
    # the push claim the call was made for (none for a token refresh): once the claim has lost its
    # push (its worker died and its lease ran out), the turn counts as ended, not two minutes after its slot
    push_id: Mapped[UUID | None]
    claim_token: Mapped[UUID | None]
