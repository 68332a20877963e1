"""``/billing-connection``: read, authorize, the browser's start and callback, disconnect. Admin keys
only (``billing:manage``), except the browser's two steps: ``start`` redeems the single-use ticket of
authorize and binds the flow to the browser (a nonce cookie), and the callback, where the platform
redirects that browser, accepts the signed, single-use ``state`` only with that cookie."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, QueryParam

from dps_billing.resources.callback_page import callback_html
from dps_billing.resources.context import AppContext
from dps_billing.schemas.connection import (
    AuthorizeLink,
    AuthorizeRequest,
    BillingConnection,
    render_connection,
    render_start_link,
)
from dps_billing.services.connect_flow import ConnectFlow
from dps_billing.services.connection import CallbackOutcome, ConnectionService
from dps_billing.settings import Settings, cookie_path

TAG = "Billing"
SCOPE = Scope.BILLING_MANAGE
NONCE_COOKIE = "dps_billing_connect"


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
        resp.media = render_connection(self._service.get_connection(req.context.principal))

    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._service.disconnect(req.context.principal)
        resp.status = falcon.HTTP_204


class AuthorizeResource:
    operations = {
        "POST": Operation(
            summary="Start connecting: the browser's start URL, good for one use within 5 minutes.",
            scope=SCOPE,
            response=AuthorizeLink,
            body=AuthorizeRequest,
            body_required=False,
            tag=TAG,
            description=(
                "Open `startUrl` in the admin's browser: it sets a short-lived HttpOnly cookie binding the flow to "
                "that browser and redirects it to the platform's install page, whose redirect comes back to GET "
                "/billing-connection/callback; a callback in another browser is refused. The flow is bound to the "
                "organization, the admin who asked and the service's mode (live or test), expires within 10 "
                "minutes and is accepted once. `returnUrl` (optional) must be under the configured console URL "
                "(400 naming `returnUrl` otherwise): the callback then redirects the browser there with "
                "`?billing=connected` or `?billing=error&code=...`."
            ),
            operation_id="authorizeBillingConnection",
            # The start URL carries the flow's ticket, a secret: only its SHA-256 is stored, and an answer
            # kept for an Idempotency-Key holds it as null, so neither the table nor a replay yields a ticket.
            secret_fields=("startUrl",),
            secret_renewal="POST /billing-connection/authorize",
        ),
    }

    def __init__(self, flow: ConnectFlow):
        self._flow = flow

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = AuthorizeRequest()
        if req.content_type is not None or req.content_length:
            body = parse_body(req, AuthorizeRequest)
        resp.media = render_start_link(self._flow.authorize(req.context.principal, body.returnUrl))


def _page(resp: falcon.Response, status: int, connected: bool, reason: str, message: str, back: str) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_HTML
    resp.text = callback_html(connected, reason, message, back)


def _private(resp: falcon.Response) -> None:
    resp.set_header("Cache-Control", "no-store")
    resp.set_header("Referrer-Policy", "no-referrer")  # the ticket, code and state stay out of Referer headers


class StartResource:
    """No key: the admin's browser opens the start URL. Sets the nonce cookie and goes to the platform."""

    public = True
    operations = {
        "GET": Operation(
            summary="The browser's first step of connecting: binds the flow to this browser, then to the platform.",
            scope=None,
            query=(QueryParam("ticket", {"type": "string"}, "The ticket of the start URL.", required=True),),
            tag=TAG,
            description=(
                "No API key (public). 303 to the platform's install page, setting a short-lived HttpOnly, "
                "SameSite=Lax cookie (Secure over https) that the callback requires. 400 (text/html) for a ticket "
                "that is unknown, already used or expired."
            ),
            operation_id="startBillingConnection",
        ),
    }

    def __init__(self, flow: ConnectFlow, settings: Settings):
        self._flow = flow
        self._settings = settings

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _private(resp)
        started = self._flow.start(req.get_param("ticket"))
        if started is None:
            _page(resp, 400, False, "ticket_invalid", "This link to connect the billing platform is not valid: it was "
                  "already used or has expired. Start again from the settings.", self._settings.return_url)
            return
        max_age = max(1, int((started.expires_at - self._flow.now()).total_seconds()))
        resp.set_cookie(NONCE_COOKIE, started.nonce, max_age=max_age, path=cookie_path(self._settings),
                        secure=self._settings.billing_redirect_uri.startswith("https:"), http_only=True,
                        same_site="Lax")
        resp.status = falcon.HTTP_303
        resp.location = started.authorize_url


class CallbackResource:
    """No key: the browser's redirect target. Answers HTML for people, never JSON or a trace, or sends
    the browser back to the console's return URL."""

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
                "No API key (public); requires the cookie set by GET /billing-connection/start in the same browser. "
                "text/html: 200 when connected or cancelled (denied); 400 for a state that is invalid, expired, "
                "already used or started in another browser (no cookie, or another one), or a code that was "
                "already used or is invalid; 502 when the platform cannot be reached. When authorize was given a "
                "`returnUrl`, a flow of this browser ends with a 303 there instead, with `?billing=connected` or "
                "`?billing=error&code=...`. Connecting records a `billing.connection.connected` event."
            ),
            operation_id="billingConnectionCallback",
        ),
    }

    def __init__(self, service: ConnectionService, settings: Settings):
        self._service = service
        self._settings = settings

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        outcome = self._service.callback(
            req.get_param("code"), req.get_param("state"), req.get_param("error"), req.get_param("error_description"),
            req.get_cookie_values(NONCE_COOKIE) or [],
        )
        _private(resp)
        resp.unset_cookie(NONCE_COOKIE, path=cookie_path(self._settings))
        if outcome.return_url:
            resp.status = falcon.HTTP_303
            resp.location = back_to(outcome)
            return
        _page(resp, outcome.status, outcome.connected, outcome.reason, outcome.message, self._settings.return_url)


def back_to(outcome: CallbackOutcome) -> str:
    """The console's return URL with the outcome added to its query."""
    assert outcome.return_url
    parts = urlsplit(outcome.return_url)
    added = [("billing", "connected")] if outcome.connected else [("billing", "error"), ("code", outcome.reason)]
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *added])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def register(api: Api, ctx: AppContext) -> None:
    service, flow = ctx.connections, ctx.connect_flow
    api.add("/billing-connection", ConnectionResource(service))
    api.add("/billing-connection/authorize", AuthorizeResource(flow))
    api.add("/billing-connection/start", StartResource(flow, ctx.settings))
    api.add("/billing-connection/callback", CallbackResource(service, ctx.settings))
