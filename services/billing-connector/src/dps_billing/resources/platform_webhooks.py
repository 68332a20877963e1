"""``POST /billing-platform/webhooks``: the billing platform's signed events. No API key: the
``Stripe-Signature`` header is the authentication."""

from __future__ import annotations

import falcon

from dps_common.http.app import Api
from dps_common.http.bodies import read_body
from dps_common.http.operations import Operation

from dps_billing.resources.context import AppContext
from dps_billing.schemas.connection import PlatformWebhookReceipt, render_webhook_receipt
from dps_billing.services.platform_events import PlatformEvents

TAG = "Billing"


class PlatformWebhooksResource:
    public = True
    operations = {
        "POST": Operation(
            summary="The billing platform's signed events: app authorized and deauthorized on an account.",
            scope=None,
            response=PlatformWebhookReceipt,
            tag=TAG,
            description=(
                "No API key (public): verified with `Stripe-Signature` (HMAC-SHA256, 300 s tolerance); a missing, "
                "bad or stale signature, or one dated more than 300 s in the future, is 400 `invalid_signature`. `account.application.deauthorized` deletes the "
                "connection to that account (a `billing.connection.removed` event follows). Other types are "
                "answered 200 and ignored; a replayed event id changes nothing."
            ),
            operation_id="receiveBillingPlatformWebhook",
        ),
    }

    def __init__(self, events: PlatformEvents):
        self._events = events

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = render_webhook_receipt(self._events.receive(read_body(req), req.get_header("Stripe-Signature")))


def register(api: Api, ctx: AppContext) -> None:
    api.add("/billing-platform/webhooks", PlatformWebhooksResource(ctx.platform_events))
