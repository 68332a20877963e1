"""Bodies of ``/billing-connection``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dps_billing.domain.connection_views import ConnectionView, RemovedConnection, StartLink
from dps_billing.schemas import ResponseModel


class AuthorizeRequest(BaseModel):
    """Unknown fields are ignored (spec section 4)."""

    model_config = ConfigDict(extra="ignore", strict=True)
    returnUrl: str | None = Field(
        default=None, max_length=2000,
        description="Where the browser goes after the callback, with `?billing=connected` or "
                    "`?billing=error&code=...` appended; must be under the service's configured console URL "
                    "(`CONSOLE_URL`). Without it, the callback answers its own HTML page.",
    )


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
    startUrl: str = Field(
        description="Open in the admin's browser, once, before `expiresAt`: it binds the flow to that browser "
                    "(a short-lived HttpOnly cookie) and redirects it to the platform's install page, which "
                    "redirects back to the callback. A callback in another browser is refused."
    )
    expiresAt: datetime = Field(description="The start URL works until then, once.")


class PlatformWebhookReceipt(ResponseModel):
    received: bool
    processed: bool = Field(description="False for an ignored type or a replayed event id.")


def render_connection(connection: ConnectionView) -> dict[str, Any]:
    """The connection record of the API and of the ``billing.connection.*`` events; never a token."""
    return {
        "id": str(connection.id),
        "status": connection.status,
        "accountId": connection.account_id,
        "livemode": connection.livemode,
        "mode": "live" if connection.livemode else "test",
        "connectedBy": str(connection.connected_by),
        "connectedAt": connection.connected_at,
        "brokenReason": connection.broken_reason,
        "updatedAt": connection.updated_at,
    }


def render_removed_connection(removed: RemovedConnection) -> dict[str, Any]:
    """The data of ``billing.connection.removed``: the connection as it was, who removed it and when."""
    return {**render_connection(removed.connection), "status": "removed", "removedBy": removed.removed_by,
            "removedAt": removed.removed_at}


def render_start_link(link: StartLink) -> dict[str, Any]:
    return {"startUrl": link.start_url, "expiresAt": link.expires_at}


def render_webhook_receipt(processed: bool) -> dict[str, Any]:
    return {"received": True, "processed": processed}
