"""The relay's SQL: claim the oldest unpublished events, mark the confirmed ones published."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from dps_api.db.models.outbox import OutboxEvent


def claim_unpublished(session: Session, limit: int) -> list[tuple[UUID, dict[str, Any]]]:
    """The oldest unpublished events, locked until this transaction ends. Rows another relay holds
    are skipped, not waited for, so relays share the backlog instead of queueing behind each other."""
    rows = session.execute(
        select(OutboxEvent.id, OutboxEvent.envelope)
        .where(OutboxEvent.published_at.is_(None))
        .order_by(OutboxEvent.occurred_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    return [(row.id, row.envelope) for row in rows]


def mark_published(session: Session, event_ids: Sequence[UUID]) -> None:
    if event_ids:
        session.execute(
            update(OutboxEvent).where(OutboxEvent.id.in_(event_ids)).values(published_at=func.now())
        )
