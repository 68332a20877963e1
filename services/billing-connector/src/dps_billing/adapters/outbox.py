"""The outbox adapter, the one place the connector's events are rendered: a use case records an event
with its subject, the view after the change (``dps_billing.services.ports.Outbox``); this renders the
subject with the renderer of the data schema the catalogue declares for the event type and writes it
into the outbox (``dps_common.outbox``), in the use case's transaction. An event type the catalogue
does not declare is refused (``UnknownEventType``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy.orm import Session

from dps_common import outbox
from dps_common.events.catalogue import EventCatalogue

from dps_billing.domain.events import RecordedEvent
from dps_billing.schemas import connection, events, pushes
from dps_billing.schemas.events import EVENTS

# each data schema of the catalogue, with the function that renders it from its subject
RENDERERS: dict[type[BaseModel], Callable[[Any], dict[str, Any]]] = {
    connection.BillingConnection: connection.render_connection,
    events.RemovedBillingConnection: connection.render_removed_connection,
    events.FinishedBillingPush: pushes.render_finished_push,
}


class EventOutbox:
    def __init__(self, catalogue: EventCatalogue = EVENTS):
        self._catalogue = catalogue

    def record(self, session: Session, event_type: str, organization_id: UUID, subject: Any,
               now: datetime) -> RecordedEvent:
        data = RENDERERS[self._catalogue[event_type].data](subject)
        outbox.record_event(session, event_type, organization_id, data, now)
        return RecordedEvent(event_type, data)


OUTBOX = EventOutbox()  # holds nothing but the catalogue: one for the whole process
