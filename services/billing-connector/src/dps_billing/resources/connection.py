"""``/billing-connection``: read, authorize, the browser's callback, disconnect. Admin keys only
(``billing:manage``), except the callback: the platform redirects the admin's browser there, and the
signed, single-use ``state`` stands in for the key."""

from __future__ import annotations

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.operations import Operation, QueryParam

from dps_billing.callback_page import render_page
from dps_billing.context import AppContext
from dps_billing.schemas.connection import AuthorizeLink, BillingConnection
from dps_billing.services.connection import ConnectionService

TAG = "Billing"
SCOPE = Scope.BILLING_MANAGE


class ConnectionResource:
    operations = {
        "GET": Operation(
            summary="The organization's billing platform connection: status, account, mode, who connected it, when.",
            scope=SCOPE,
            response=BillingConnection,
            errors=(404,),
            tag=TAG,
            description="404 `billing_not_connected` when none is connected.",
            operation_id="getBillingConnection",
        ),
        "DELETE": Operation(
            summary="Disconnect: the app is deauthorized on the platform and the connection deleted (tokens erased).",
            scope=SCOPE,
            status=204,
            errors=(404, 502),
            tag=TAG,
            description=(
                "A `billing.connection.removed` event follows. 404 `billing_not_connected` when none is connected; "
                "502 `billing_platform_unavailable` (the connection is kept) when the platform cannot be reached."
            ),
            operation_id="deleteBillingConnection",
        ),
    }

    def __init__(self, service: ConnectionService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._service.get_connection(req.context.principal)

    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._service.disconnect(req.context.principal)
        resp.status = falcon.HTTP_204


class AuthorizeResource:
    operations = {
        "POST": Operation(
            summary="Start connecting: the platform's authorize URL, with a signed state good for one use.",
            scope=SCOPE,
            response=AuthorizeLink,
            body_required=False,
            tag=TAG,
            description=(
                "The state is bound to the organization, the admin who asked and the service's mode (live or "
                "test), expires within 10 minutes and is accepted once. The admin installs the app on the "
                "platform, which redirects the browser to GET /billing-connection/callback."
            ),
            operation_id="authorizeBillingConnection",
        ),
    }

    def __init__(self, service: ConnectionService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._service.authorize(req.context.principal)


class CallbackResource:
    """No key: the browser's redirect target. Answers HTML for people, never JSON or a trace."""

    public = True
    operations = {
        "GET": Operation(
            summary="The platform's redirect target after the install: stores the connection, answers an HTML page.",
            scope=None,
            query=(
                QueryParam("code", {"type": "string"}, "The one-time authorization code."),
                QueryParam("state", {"type": "string"}, "The state of the authorize URL.", required=True),
                QueryParam("error", {"type": "string"}, "access_denied when the admin cancelled."),
                QueryParam("error_description", {"type": "string"}),
            ),
            tag=TAG,
            description=(
                "No API key (public). text/html: 200 when connected or cancelled (denied); 400 for a state that is "
                "invalid, expired or already used, or a code that was already used or is invalid; 502 when the "
                "platform cannot be reached. Connecting records a `billing.connection.connected` event."
            ),
            operation_id="billingConnectionCallback",
        ),
    }

    def __init__(self, service: ConnectionService, return_url: str):
        self._service = service
        self._return_url = return_url

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        outcome = self._service.callback(
            req.get_param("code"), req.get_param("state"), req.get_param("error"), req.get_param("error_description")
        )
        resp.status = outcome.status
        resp.content_type = falcon.MEDIA_HTML
        resp.set_header("Cache-Control", "no-store")
        resp.set_header("Referrer-Policy", "no-referrer")  # the code and state stay out of Referer headers
        resp.text = render_page(outcome.connected, outcome.reason, outcome.message, self._return_url)


def register(api: Api, ctx: AppContext) -> None:
    service = ConnectionService(ctx.tx, ctx.sealer, ctx.oauth, ctx.settings, ctx.now)
    api.add("/billing-connection", ConnectionResource(service))
    api.add("/billing-connection/authorize", AuthorizeResource(service))
    api.add("/billing-connection/callback", CallbackResource(service, ctx.settings.return_url))
