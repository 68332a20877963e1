"""The connector's event catalogue: the billing events it writes to its outbox, with their data."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from dps_common.events.catalogue import EventCatalogue, EventType
from dps_common.openapi.examples import example

from dps_billing.schemas import ResponseModel
from dps_billing.schemas.connection import BillingConnection
from dps_billing.schemas.pushes import PUSH_EXAMPLE, BillingPush


class RemovedBillingConnection(ResponseModel):
    id: str
    status: Literal["removed"]
    accountId: str
    livemode: bool
    mode: Literal["live", "test"]
    connectedBy: str
    connectedAt: datetime
    removedBy: Literal["service", "platform"] = Field(
        description="service: DELETE /billing-connection or a new connection replaced it; platform: the app was "
        "removed on the billing platform."
    )
    removedAt: datetime


class FinishedBillingPush(BillingPush):
    model_config = example({**PUSH_EXAMPLE, "organizationId": "0192a3b4-c5d6-7e8f-9a0b-0a1b2c3d4e5f"})
    organizationId: str


EVENTS = EventCatalogue([
    EventType("billing.connection.connected", "An admin connected the billing platform.", BillingConnection),
    EventType("billing.connection.broken", "The platform refused to refresh the grant; connect again.",
              BillingConnection),
    EventType("billing.connection.removed", "The billing connection was removed, here or on the platform.",
              RemovedBillingConnection),
    EventType("billing.quote_pushed", "A push finished: the draft quote is on the billing platform.",
              FinishedBillingPush),
    EventType("billing.push_failed", "A push ended without a billing quote; error says why.", FinishedBillingPush),
])
