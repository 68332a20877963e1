"""Bodies of ``/billing-connection``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from dps_billing.schemas import ResponseModel


class BillingConnection(ResponseModel):
    id: str
    status: Literal["connected", "broken"] = Field(
        description="broken: the platform refused to refresh the grant (e.g. the app was removed); connect again."
    )
    accountId: str = Field(description="The billing platform account (acct_...).")
    livemode: bool
    mode: Literal["live", "test"]
    connectedBy: str = Field(description="The admin user who completed the authorization.")
    connectedAt: datetime
    brokenReason: str | None
    updatedAt: datetime


class AuthorizeLink(ResponseModel):
    authorizeUrl: str = Field(
        description="Open in the admin's browser: the platform asks to install the app, then redirects back."
    )
    expiresAt: datetime = Field(description="The link's state is accepted until then, once.")


class PlatformWebhookReceipt(ResponseModel):
    received: bool
    processed: bool = Field(description="False for an ignored type or a replayed event id.")
