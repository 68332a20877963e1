"""The billing integration: the connection's status, Connect (the connector's start URL, back to
this page with ``?billing=connected`` or ``?billing=error&code=...``), Disconnect (after a
confirmation page), and the recent pushes."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.domain.people import BILLING, PUSHES
from dps_console.domain.problems import ServiceRefused
from dps_console.resources.context import AppContext
from dps_console.resources.forms import Done, FormActions
from dps_console.resources.web import ROOT, Cookies, Renderer, allowed, form_page_token, path_id
from dps_console.services.ports import Started

QUOTE_NAMES_PER_PAGE = 25  # the pushes page lists 25 pushes: at most one quote read per push
RESULT_CODES = {
    "access_denied": "The installation was cancelled on the billing platform.",
    "invalid_state": "The connect link expired or was used already. Connect again.",
}


class Billing:
    inline_forms = True  # its buttons' one-time tokens come from the view token in its address (views)

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, BILLING)
        connection: dict[str, Any] | None
        try:
            connection = self._ctx.backends.billing.call("GET", "/billing-connection", session.credential)
        except ServiceRefused as refused:
            if refused.problem.status != 404:
                raise
            connection = None
        result, code = req.get_param("billing"), req.get_param("code") or ""
        message = None
        if result == "connected":
            message = "The billing platform is connected."
        elif result == "error":
            message = "Connecting failed: " + RESULT_CODES.get(code, f"the billing platform answered “{code[:80]}”.")
        self._renderer.render(req, resp, "billing.html", section="billing", connection=connection,
                              result=result, result_message=message)


class Connect:
    """Asks the connector for its start URL and hands it to the person as a link, on the page after
    the redirect (the start URL sealed across it, shown once): the page's ``form-action 'self'``
    forbids a form's redirect to leave the console, and a link is a plain navigation (the start URL
    is single use, short-lived, and bound to this browser once opened)."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, BILLING)

        def connect(token: str) -> Done:
            answer = self._ctx.backends.billing.call(
                "POST", "/billing-connection/authorize", session.credential, once=token,
                json={"returnUrl": self._ctx.settings.public_url + "/billing"},
            )
            start = answer.get("startUrl") or answer.get("authorizeUrl")
            if not isinstance(start, str) or not start.startswith(("https://", "http://")):
                raise falcon.HTTPBadGateway(title="The billing connector gave no address to connect at.")
            page = {"kind": "continue", "section": "billing", "title": "Continue to the billing platform",
                    "what": "The link to the billing platform", "back": ROOT + "/billing", "back_label": "Back to the billing integration",
                    "gone": "This link to the billing platform was shown once. To connect, press Connect again."}
            return Done(ROOT + "/billing", page=page, secret=start)

        self._forms.run(req, connect)


class Disconnect:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        allowed(req, BILLING)
        token = form_page_token(req)
        self._renderer.render(
            req, resp, "confirm.html", section="billing", title="Disconnect the billing platform?",
            explanation="Approved quotes are no longer pushed. You can connect again later.",
            action=ROOT + "/billing/disconnect", button="Disconnect", cancel=ROOT + "/billing", form_token=token,
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, BILLING)

        def disconnect(token: str) -> Done:
            self._ctx.backends.billing.call("DELETE", "/billing-connection", session.credential, once=token)
            return Done(ROOT + "/billing", notice="The billing platform is disconnected.")

        self._forms.run(req, disconnect)


class Pushes:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, PUSHES)
        params = {"limit": str(QUOTE_NAMES_PER_PAGE)}
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.billing.call("GET", "/billing-pushes", session.credential, params=params)
        pushes = answer.get("billingPushes", [])
        self._renderer.render(req, resp, "pushes.html", section="pushes" if not session.person.is_admin else "billing",
                              pushes=pushes, quote_names=self._quote_names(pushes, session.credential),
                              next_cursor=answer.get("nextCursor"))

    def _quote_names(self, pushes: list[dict[str, Any]], credential: str) -> dict[str, str]:
        """The quotes' names, read from the api (the connector's push carries only the quote's id):
        one call per quote of the page, at most ``QUOTE_NAMES_PER_PAGE``, side by side; a quote the
        person may not read (or gone) keeps its id."""
        names: dict[str, str] = {}
        ids = list(dict.fromkeys(str(p.get("quoteId")) for p in pushes if not p.get("quoteName") and p.get("quoteId")))
        api = self._ctx.backends.api

        def read(quote_id: str) -> Started[Any]:
            return self._ctx.alongside.start(
                lambda: api.call("GET", f"/pricing-quotes/{path_id(quote_id)}", credential))

        reads = [(quote_id, read(quote_id)) for quote_id in ids[:QUOTE_NAMES_PER_PAGE]]
        for n, (quote_id, started) in enumerate(reads):
            try:
                quote = started.result()
            except (ServiceRefused, falcon.HTTPNotFound):
                continue
            except BaseException:
                for _, rest in reads[n + 1:]:
                    rest.cancel()
                raise
            if isinstance(quote, dict) and isinstance(quote.get("name"), str) and quote["name"]:
                names[quote_id] = quote["name"]
        return names


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(ROOT + "/billing", Billing(ctx, renderer))
    app.add_route(ROOT + "/billing/connect", Connect(ctx, renderer))
    app.add_route(ROOT + "/billing/disconnect", Disconnect(ctx, renderer))
    app.add_route(ROOT + "/billing/pushes", Pushes(ctx, renderer))
