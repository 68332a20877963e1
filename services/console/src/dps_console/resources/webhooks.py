"""Webhook endpoints: the list, one endpoint, create and edit (event types picked from the dispatcher's
catalogue; a new endpoint's secret shown once, after the redirect); the event catalogue. The actions
on one endpoint (pause, resume, re-activate, rotate the secret, send a test, revoke) are in
``endpoint_actions``, deliveries in ``deliveries``. Admins only: anyone else gets a 403 page."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.domain.people import WEBHOOKS
from dps_console.domain.problems import Problem, ServiceRefused
from dps_console.domain.tokens import new_token
from dps_console.resources import deliveries, endpoint_actions
from dps_console.resources.context import AppContext
from dps_console.resources.endpoint_actions import secret_page
from dps_console.resources.forms import Done, FormActions, secret_of
from dps_console.resources.listing import endpoint_status, filter_by_status
from dps_console.resources.web import ROOT, Cookies, Renderer, allowed, first, form_page_token, path_id, signed_in

FORM_FIELDS = ("url", "description", "eventTypes")
ENDPOINT_STATUSES = (("active", "active"), ("paused", "paused"), ("disabled", "disabled"), ("revoked", "revoked"))


class Endpoints:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, WEBHOOKS)
        params = {"limit": "100"}
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.webhooks.call("GET", "/webhook-configs", session.credential, params=params)
        view = filter_by_status(req, answer.get("webhookConfigs", []), ENDPOINT_STATUSES, endpoint_status)
        self._renderer.render(req, resp, "webhooks.html", section="webhooks", endpoints=view.shown, view=view,
                              next_cursor=answer.get("nextCursor"))


class Endpoint:
    inline_forms = True  # its buttons' one-time tokens come from the view token in its address (views)

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        endpoint = self._ctx.backends.webhooks.call("GET", f"/webhook-configs/{path_id(endpoint_id)}", session.credential)
        self._renderer.render(req, resp, "webhook.html", section="webhooks", endpoint=endpoint)


def _body(form: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "url": first(form, "url").strip(),
        "description": first(form, "description").strip(),
        "eventTypes": [t for t in form.get("eventTypes", []) if t],
    }


class EndpointForm:
    """``/webhooks/new`` creates (the secret shown once, after the redirect); ``/webhooks/{id}/edit`` updates."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None = None) -> None:
        session = allowed(req, WEBHOOKS)
        token = form_page_token(req)
        values: dict[str, Any] = {"url": "", "description": "", "eventTypes": []}
        if endpoint_id is not None:
            values = self._ctx.backends.webhooks.call(
                "GET", f"/webhook-configs/{path_id(endpoint_id)}", session.credential)
        self._form(req, resp, endpoint_id, values, token=token)

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None = None) -> None:
        session = allowed(req, WEBHOOKS)
        body = _body(req.context.form)
        webhooks = self._ctx.backends.webhooks

        def save(token: str) -> Done:
            if endpoint_id is None:
                created = webhooks.call("POST", "/webhook-configs", session.credential, json=body, once=token)
                return Done(f"{ROOT}/webhooks/{created['id']}", secret=secret_of(created),
                            page=secret_page("Webhook endpoint added", created, "Go to the endpoint"))
            webhooks.call("PUT", f"/webhook-configs/{path_id(endpoint_id)}", session.credential, json=body, once=token)
            return Done(f"{ROOT}/webhooks/{endpoint_id}", notice="The endpoint is saved.")

        try:
            self._forms.run(req, save)
        except ServiceRefused as refused:
            if refused.problem.status not in (400, 409, 422):
                raise
            self._form(req, resp, endpoint_id, body, refused.problem, status=refused.problem.status)

    def _form(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None, values: dict[str, Any],
              problem: Problem | None = None, status: int = 200, token: str | None = None) -> None:
        """``token``: the page's own; a form shown again with the service's refusal gets a fresh one."""
        session = signed_in(req)
        self._renderer.render(
            req, resp, "webhook_form.html", status=status, section="webhooks", endpoint_id=endpoint_id,
            values=values, event_types=self._ctx.catalogue.types(session.credential),
            errors=problem.fields if problem else {}, problem=problem.message if problem else None,
            unplaced=problem.unplaced(FORM_FIELDS) if problem else [], form_token=token or new_token(),
        )


class EventTypes:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, WEBHOOKS)
        self._renderer.render(req, resp, "event_types.html", section="webhooks",
                              event_types=self._ctx.catalogue.types(session.credential))


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    base = ROOT + "/webhooks"
    app.add_route(base, Endpoints(ctx, renderer))
    app.add_route(base + "/event-types", EventTypes(ctx, renderer))
    form = EndpointForm(ctx, renderer)
    app.add_route(base + "/new", form)
    app.add_route(base + "/{endpoint_id}", Endpoint(ctx, renderer))
    app.add_route(base + "/{endpoint_id}/edit", form)
    endpoint_actions.register(app, ctx, renderer)
    deliveries.register(app, ctx, renderer)
