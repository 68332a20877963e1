"""The event log's store: the organization's events (``webhook_events``) read newest first.

The list's order is the dispatcher's receipt, ``(received_at, id)`` descending: each page resumes
strictly after the last row's key, on the index ``(organization_id, received_at, id)`` (with a type,
``(organization_id, event_type, received_at, id)``), so a deep page costs what the first does.
Events are written by the intake alone (``services/intake.py``) and purged by retention
(``services/retention.py``); this module only reads.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_webhooks.db.models import WebhookEvent
from dps_webhooks.domain.event_views import EventFilter

# a cursor's position (``domain.event_views.list_position``) read back: the received time, the id
POSITION_CONVERT: list[Any] = [datetime.fromisoformat, UUID]


def _listed(organization_id: UUID, filters: EventFilter) -> Select[WebhookEvent]:
    stmt = select(WebhookEvent).where(WebhookEvent.organization_id == organization_id)
    if filters.type is not None:
        stmt = stmt.where(WebhookEvent.event_type == filters.type)
    if filters.received_after is not None:
        stmt = stmt.where(WebhookEvent.received_at >= filters.received_after)
    if filters.received_before is not None:
        stmt = stmt.where(WebhookEvent.received_at < filters.received_before)
    return stmt


def page_statement(organization_id: UUID, filters: EventFilter, page: PageRequest) -> Select[WebhookEvent]:
    """The query of a page: ``limit + 1`` of the organization's events after the page's position,
    newest first (the bench explains it: ``bench/event_log.py``)."""
    return keyset(
        _listed(organization_id, filters),
        [WebhookEvent.received_at, WebhookEvent.id],
        page,
        descending=True,
        convert=POSITION_CONVERT,
    )


def page_of_events(
    session: Session, organization_id: UUID, filters: EventFilter, page: PageRequest
) -> list[WebhookEvent]:
    return list(session.scalars(page_statement(organization_id, filters, page)))


def organization_event(session: Session, organization_id: UUID, event_id: UUID) -> WebhookEvent | None:
    """The event, or None when it is unknown, purged or another organization's (the same to a caller)."""
    return session.scalar(
        select(WebhookEvent).where(WebhookEvent.id == event_id, WebhookEvent.organization_id == organization_id)
    )
