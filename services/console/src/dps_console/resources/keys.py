"""API keys: the list, issuing (the secret shown once, on the page that answers the POST, never
stored), rotating and revoking (each after a confirmation page). The api decides who may do what
(scope api-keys:manage, roles, own keys only); the console shows its answers."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.context import AppContext
from dps_console.domain.problems import Problem
from dps_console.resources.listing import filter_by_status, key_status
from dps_console.resources.web import ROOT, Cookies, Renderer, first, path_id, redirect, signed_in
from dps_console.services.backends import ServiceRefused

FORM_FIELDS = ("name", "role", "userId")
KEY_STATUSES = (("active", "active"), ("revoked", "revoked"))


def _paging(req: falcon.Request) -> dict[str, str]:
    params = {"limit": "100"}
    cursor = req.get_param("cursor")
    if cursor:
        params["cursor"] = cursor
    return params


class KeyList:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = signed_in(req)
        if not session.person.manages_keys:
            self._renderer.render(req, resp, "keys.html", section="keys", no_access=True, keys=[], next_cursor=None)
            return
        answer = self._ctx.backends.api.call("GET", "/api-keys", session.credential, params=_paging(req))
        view = filter_by_status(req, answer.get("apiKeys", []), KEY_STATUSES, key_status)
        self._renderer.render(req, resp, "keys.html", section="keys", no_access=False,
                              keys=view.shown, view=view, next_cursor=answer.get("nextCursor"))


class NewKey:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = signed_in(req)
        people: list[dict[str, Any]] = []
        if session.person.is_admin:
            people = self._ctx.backends.api.call("GET", "/people", session.credential, params={"limit": "500"})["people"]
        # least privilege first: the lowest role offered is preselected, never the person's own
        offered = session.person.roles_offered()
        self._form(req, resp, people=people, values={"userId": session.person.user_id,
                                                     "role": offered[-1] if offered else ""})

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = signed_in(req)
        form = req.context.form
        body: dict[str, Any] = {"name": first(form, "name").strip(), "role": first(form, "role")}
        user_id = first(form, "userId")
        if user_id and user_id != session.person.user_id:
            body["userId"] = user_id
        try:
            key = self._ctx.backends.api.call("POST", "/api-keys", session.credential, json=body)
        except ServiceRefused as refused:
            if refused.problem.status not in (400, 403, 409, 422):
                raise
            # the chosen acting user only: listing the team again would be a second call to the api
            chosen = [{"id": user_id, "name": first(form, "userName") or user_id}] if user_id else []
            self._form(req, resp, people=chosen, values={**body, "userId": user_id}, problem=refused.problem,
                       status=refused.problem.status)
            return
        self._renderer.render(req, resp, "secret.html", status=201, section="keys", title="API key issued",
                              what=f"The API key “{key.get('name', '')}”", secret=key["secret"],
                              back=ROOT + "/api-keys", back_label="Back to API keys")

    def _form(self, req: falcon.Request, resp: falcon.Response, *, people: list[dict[str, Any]],
              values: dict[str, Any], problem: Problem | None = None, status: int = 200) -> None:
        session = signed_in(req)
        self._renderer.render(
            req, resp, "key_form.html", status=status, section="keys", people=people, values=values,
            roles=session.person.roles_offered(), errors=problem.fields if problem else {},
            problem=problem.message if problem else None, unplaced=problem.unplaced(FORM_FIELDS) if problem else [],
        )


class KeyAction:
    """GET: the confirmation page; POST: the action (rotate answers the new secret, revoke redirects)."""

    def __init__(self, ctx: AppContext, renderer: Renderer, action: str):
        self._ctx = ctx
        self._renderer = renderer
        self._action = action

    def on_get(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        signed_in(req)
        key_id = path_id(key_id)
        name = req.get_param("name") or key_id
        rotate = self._action == "rotate"
        self._renderer.render(
            req, resp, "confirm.html", section="keys",
            title=f"{'Rotate' if rotate else 'Revoke'} the API key “{name}”?",
            explanation=("A new secret is issued and shown once; the current secret stops working at once."
                         if rotate else "The key stops working at once. This cannot be undone."),
            action=f"{ROOT}/api-keys/{key_id}/{self._action}", button="Rotate" if rotate else "Revoke",
            cancel=ROOT + "/api-keys",
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        session = signed_in(req)
        key = self._ctx.backends.api.call("POST", f"/api-keys/{path_id(key_id)}/{self._action}", session.credential)
        if self._action == "rotate":
            self._renderer.render(req, resp, "secret.html", section="keys", title="API key rotated",
                                  what=f"The API key “{key.get('name', '')}”", secret=key["secret"],
                                  back=ROOT + "/api-keys", back_label="Back to API keys")
            return
        self._ctx.sessions.note(session, f"The API key “{key.get('name', '')}” is revoked.")
        raise redirect(ROOT + "/api-keys")


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(ROOT + "/api-keys", KeyList(ctx, renderer))
    app.add_route(ROOT + "/api-keys/new", NewKey(ctx, renderer))
    app.add_route(ROOT + "/api-keys/{key_id}/rotate", KeyAction(ctx, renderer, "rotate"))
    app.add_route(ROOT + "/api-keys/{key_id}/revoke", KeyAction(ctx, renderer, "revoke"))
