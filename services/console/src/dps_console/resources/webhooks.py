"""Webhook endpoints: the list, one endpoint with its actions, create and edit (event types picked
from the dispatcher's catalogue), pause, resume, re-activate, rotate the secret (shown once), send a
test, revoke (``/delete``: DELETE at the dispatcher, "revocation" in the spec); the event catalogue. Deliveries are in ``deliveries``."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.context import AppContext
from dps_console.domain.problems import Problem
from dps_console.resources import deliveries
from dps_console.resources.listing import endpoint_status, filter_by_status
from dps_console.resources.web import ROOT, Cookies, Renderer, first, path_id, redirect, signed_in
from dps_console.services.backends import ServiceRefused

FORM_FIELDS = ("url", "description", "eventTypes")
STATUS_ACTIONS = {"pause": "PAUSED", "resume": "ACTIVE", "reactivate": "ACTIVE"}
ENDPOINT_STATUSES = (("active", "active"), ("paused", "paused"), ("disabled", "disabled"), ("revoked", "revoked"))


class Endpoints:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = signed_in(req)
        params = {"limit": "100"}
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.webhooks.call("GET", "/webhook-configs", session.credential, params=params)
        view = filter_by_status(req, answer.get("webhookConfigs", []), ENDPOINT_STATUSES, endpoint_status)
        self._renderer.render(req, resp, "webhooks.html", section="webhooks", endpoints=view.shown, view=view,
                              next_cursor=answer.get("nextCursor"))


class Endpoint:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = signed_in(req)
        endpoint = self._ctx.backends.webhooks.call("GET", f"/webhook-configs/{path_id(endpoint_id)}", session.credential)
        self._renderer.render(req, resp, "webhook.html", section="webhooks", endpoint=endpoint)


def _body(form: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "url": first(form, "url").strip(),
        "description": first(form, "description").strip(),
        "eventTypes": [t for t in form.get("eventTypes", []) if t],
    }


class EndpointForm:
    """``/webhooks/new`` creates (the secret answered once); ``/webhooks/{id}/edit`` updates."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None = None) -> None:
        session = signed_in(req)
        values: dict[str, Any] = {"url": "", "description": "", "eventTypes": []}
        if endpoint_id is not None:
            values = self._ctx.backends.webhooks.call(
                "GET", f"/webhook-configs/{path_id(endpoint_id)}", session.credential)
        self._form(req, resp, endpoint_id, values)

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None = None) -> None:
        session = signed_in(req)
        body = _body(req.context.form)
        webhooks = self._ctx.backends.webhooks
        try:
            if endpoint_id is None:
                created = webhooks.call("POST", "/webhook-configs", session.credential, json=body)
            else:
                webhooks.call("PUT", f"/webhook-configs/{path_id(endpoint_id)}", session.credential, json=body)
        except ServiceRefused as refused:
            if refused.problem.status not in (400, 409, 422):
                raise
            self._form(req, resp, endpoint_id, body, refused.problem, status=refused.problem.status)
            return
        if endpoint_id is None:
            self._renderer.render(req, resp, "secret.html", status=201, section="webhooks",
                                  title="Webhook endpoint added", what=f"The endpoint {created['url']}",
                                  secret=created["secret"], back=f"{ROOT}/webhooks/{created['id']}",
                                  back_label="Go to the endpoint")
            return
        self._ctx.sessions.note(session, "The endpoint is saved.")
        raise redirect(f"{ROOT}/webhooks/{endpoint_id}")

    def _form(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None, values: dict[str, Any],
              problem: Problem | None = None, status: int = 200) -> None:
        session = signed_in(req)
        self._renderer.render(
            req, resp, "webhook_form.html", status=status, section="webhooks", endpoint_id=endpoint_id,
            values=values, event_types=self._ctx.catalogue.types(session.credential),
            errors=problem.fields if problem else {}, problem=problem.message if problem else None,
            unplaced=problem.unplaced(FORM_FIELDS) if problem else [],
        )


class StatusChange:
    def __init__(self, ctx: AppContext, action: str):
        self._ctx = ctx
        self._action = action

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = signed_in(req)
        self._ctx.backends.webhooks.call("PUT", f"/webhook-configs/{path_id(endpoint_id)}", session.credential,
                                         json={"status": STATUS_ACTIONS[self._action]})
        done = {"pause": "paused", "resume": "resumed", "reactivate": "active again"}[self._action]
        self._ctx.sessions.note(session, f"The endpoint is {done}.")
        raise redirect(f"{ROOT}/webhooks/{endpoint_id}")


class SendTest:
    def __init__(self, ctx: AppContext):
        self._ctx = ctx

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = signed_in(req)
        self._ctx.backends.webhooks.call("POST", f"/webhook-configs/{path_id(endpoint_id)}/test", session.credential)
        self._ctx.sessions.note(session, "A test event is on its way: see the delivery log.")
        raise redirect(f"{ROOT}/webhooks/{endpoint_id}")


class RotateSecret:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        signed_in(req)
        self._renderer.render(
            req, resp, "confirm.html", section="webhooks", title="Rotate the endpoint's signing secret?",
            explanation="A new secret is shown once. Deliveries are signed with the new secret from now on: "
                        "update your receiver.",
            action=f"{ROOT}/webhooks/{path_id(endpoint_id)}/rotate-secret", button="Rotate secret",
            cancel=f"{ROOT}/webhooks/{endpoint_id}",
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = signed_in(req)
        rotated = self._ctx.backends.webhooks.call(
            "POST", f"/webhook-configs/{path_id(endpoint_id)}/rotate-secret", session.credential)
        self._renderer.render(req, resp, "secret.html", section="webhooks", title="Signing secret rotated",
                              what=f"The endpoint {rotated.get('url', '')}", secret=rotated["secret"],
                              back=f"{ROOT}/webhooks/{endpoint_id}", back_label="Back to the endpoint")


class Delete:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        signed_in(req)
        self._renderer.render(
            req, resp, "confirm.html", section="webhooks", title="Revoke this webhook endpoint?",
            explanation="No more events are delivered to it, and it cannot be used again. This cannot be undone.",
            action=f"{ROOT}/webhooks/{path_id(endpoint_id)}/delete", button="Revoke endpoint",
            cancel=f"{ROOT}/webhooks/{endpoint_id}",
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = signed_in(req)
        self._ctx.backends.webhooks.call("DELETE", f"/webhook-configs/{path_id(endpoint_id)}", session.credential)
        self._ctx.sessions.note(session, "The endpoint is revoked.")
        raise redirect(ROOT + "/webhooks")


class EventTypes:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = signed_in(req)
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
    for action in STATUS_ACTIONS:
        app.add_route(f"{base}/{{endpoint_id}}/{action}", StatusChange(ctx, action))
    app.add_route(base + "/{endpoint_id}/test", SendTest(ctx))
    app.add_route(base + "/{endpoint_id}/rotate-secret", RotateSecret(ctx, renderer))
    app.add_route(base + "/{endpoint_id}/delete", Delete(ctx, renderer))
    deliveries.register(app, ctx, renderer)
