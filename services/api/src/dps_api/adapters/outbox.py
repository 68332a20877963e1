"""The outbox adapter, the one place events are rendered: a use case records an event with its
subject, the view after the change (``dps_api.services.outbox.Outbox``); this renders the subject
with the renderer of the data schema the catalogue declares for the event type (the subject as its
own GET renders it) and writes it into the outbox (``dps_common.outbox``), in the use case's
transaction. An event type the catalogue does not declare is refused (``UnknownEventType``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel
from sqlalchemy.orm import Session

from dps_common import outbox
from dps_common.events.catalogue import EventCatalogue

from dps_api.domain.events import RecordedEvents
from dps_api.schemas import approval_config, approvals, catalog, deal_groups, opportunities, quotes
from dps_api.schemas.events import EVENTS

# each data schema of the catalogue, with the function that renders it from its view
RENDERERS: dict[type[BaseModel], Callable[[Any], dict[str, Any]]] = {
    catalog.Product: catalog.render_product,
    catalog.Pricebook: catalog.render_pricebook,
    opportunities.Opportunity: opportunities.render_opportunity,
    deal_groups.DealGroup: deal_groups.render_deal_group,
    quotes.PricingQuote: quotes.render_quote,
    approvals.ApprovalRequest: approvals.render_approval,
    approval_config.ApprovalGroup: approval_config.render_approval_group,
    approval_config.ApprovalRule: approval_config.render_approval_rule,
    approval_config.ApprovalRuleGroup: approval_config.render_approval_rule_group,
}


class EventOutbox:
    def __init__(self, catalogue: EventCatalogue = EVENTS):
        self._catalogue = catalogue

    def record(
        self, session: Session, subject: Any, organization_id: UUID, now: datetime, *event_types: str
    ) -> RecordedEvents:
        schemas = {self._catalogue[event_type].data for event_type in event_types}
        if len(schemas) != 1:
            raise ValueError(f"events of one subject share one data schema: {event_types!r}")
        data = RENDERERS[schemas.pop()](subject)
        for event_type in event_types:
            outbox.record_event(session, event_type, organization_id, data, now)
        return RecordedEvents(event_types, data)


OUTBOX = EventOutbox()  # holds nothing but the catalogue: one for the whole process
