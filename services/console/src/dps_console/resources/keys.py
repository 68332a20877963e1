"""API keys: the list, issuing (the secret shown once, on the page after the POST's redirect, never
kept in the clear), rotating and revoking (each after a confirmation page naming the key as the api
has it: 404 for a key the person may not see). The api decides who may do what (scope
api-keys:manage, roles, own keys only); the console offers only what the person's role may use."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.domain.people import KEYS
from dps_console.domain.problems import Problem, ServiceRefused
from dps_console.domain.tokens import new_token
from dps_console.resources.context import AppContext
from dps_console.resources.forms import Done, FormActions, secret_of
from dps_console.resources.listing import filter_by_status, key_status
from dps_console.resources.web import ROOT, Cookies, Renderer, allowed, first, form_page_token, path_id, signed_in
from dps_console.services.listed_items import find_listed
from dps_console.services.ports import ServiceApi

FORM_FIELDS = ("name", "role", "userId")
GONE = "The console does not keep it: if you did not copy it, rotate the key to get a new one."
KEY_STATUSES = (("active", "active"), ("revoked", "revoked"))


def find_key(api: ServiceApi, credential: str, key_id: str) -> dict[str, Any]:
    """The key as the api lists it to this person (it has no single-key read): 404 when not theirs."""
    found = find_listed(api, credential, "/api-keys", "apiKeys", key_id)
    if found is None:
        raise falcon.HTTPNotFound()
    return found


def _secret_page(title: str, name: str) -> dict[str, Any]:
    return {"section": "keys", "title": title, "what": f"The API key “{name}”", "back": ROOT + "/api-keys",
            "back_label": "Back to API keys", "gone": GONE}


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
        if not session.person.manages_keys:  # what they cannot do, and whom to ask: no table, no form
            self._renderer.render(req, resp, "keys.html", status=403, section="keys", no_access=True, keys=[],
                                  next_cursor=None)
            return
        answer = self._ctx.backends.api.call("GET", "/api-keys", session.credential, params=_paging(req))
        view = filter_by_status(req, answer.get("apiKeys", []), KEY_STATUSES, key_status)
        self._renderer.render(req, resp, "keys.html", section="keys", no_access=False,
                              keys=view.shown, view=view, next_cursor=answer.get("nextCursor"))


class NewKey:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, KEYS)
        token = form_page_token(req)
        people: list[dict[str, Any]] = []
        if session.person.is_admin:
            people = self._ctx.backends.api.call("GET", "/people", session.credential, params={"limit": "500"})["people"]
        # least privilege first: the lowest role offered is preselected, never the person's own
        offered = session.person.roles_offered()
        self._form(req, resp, people=people, values={"userId": session.person.user_id,
                                                     "role": offered[-1] if offered else ""}, token=token)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, KEYS)
        form = req.context.form
        body: dict[str, Any] = {"name": first(form, "name").strip(), "role": first(form, "role")}
        user_id = first(form, "userId")
        if user_id and user_id != session.person.user_id:
            body["userId"] = user_id

        def issue(token: str) -> Done:
            key = self._ctx.backends.api.call("POST", "/api-keys", session.credential, json=body, once=token)
            return Done(ROOT + "/api-keys", page=_secret_page("API key issued", str(key.get("name", ""))),
                        secret=secret_of(key))

        try:
            self._forms.run(req, issue)
        except ServiceRefused as refused:
            if refused.problem.status not in (400, 403, 409, 422):
                raise
            # the chosen acting user only: listing the team again would be a second call to the api
            chosen = [{"id": user_id, "name": first(form, "userName") or user_id}] if user_id else []
            self._form(req, resp, people=chosen, values={**body, "userId": user_id}, problem=refused.problem,
                       status=refused.problem.status)

    def _form(self, req: falcon.Request, resp: falcon.Response, *, people: list[dict[str, Any]],
              values: dict[str, Any], problem: Problem | None = None, status: int = 200, token: str | None = None) -> None:
        """``token``: the page's own; a form shown again with the service's refusal gets a fresh one."""
        session = signed_in(req)
        self._renderer.render(
            req, resp, "key_form.html", status=status, section="keys", people=people, values=values,
            roles=session.person.roles_offered(), errors=problem.fields if problem else {},
            problem=problem.message if problem else None, unplaced=problem.unplaced(FORM_FIELDS) if problem else [],
            form_token=token or new_token(),
        )


class KeyAction:
    """GET: the confirmation page, naming the key as the api has it; POST: the action (rotate shows
    the new secret once, revoke goes back to the list)."""

    def __init__(self, ctx: AppContext, renderer: Renderer, action: str):
        self._ctx = ctx
        self._renderer = renderer
        self._action = action
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        session = allowed(req, KEYS)
        key_id = path_id(key_id)
        token = form_page_token(req)
        key = find_key(self._ctx.backends.api, session.credential, key_id)
        rotate = self._action == "rotate"
        if key.get("status") != "active":
            raise falcon.HTTPConflict(title=f"The API key “{key.get('name', '')}” is revoked already",
                                      description="A revoked key cannot be rotated or revoked again.")
        self._renderer.render(
            req, resp, "confirm.html", section="keys",
            title=f"{'Rotate' if rotate else 'Revoke'} the API key “{key.get('name', '')}”?",
            explanation=("A new secret is issued and shown once; the current secret stops working at once."
                         if rotate else "The key stops working at once. This cannot be undone."),
            action=f"{ROOT}/api-keys/{key_id}/{self._action}", button="Rotate" if rotate else "Revoke",
            cancel=ROOT + "/api-keys", form_token=token,
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        session = allowed(req, KEYS)
        path = f"/api-keys/{path_id(key_id)}/{self._action}"

        def act(token: str) -> Done:
            key = self._ctx.backends.api.call("POST", path, session.credential, once=token)
            name = str(key.get("name", ""))
            if self._action == "rotate":
                return Done(ROOT + "/api-keys", page=_secret_page("API key rotated", name), secret=secret_of(key))
            return Done(ROOT + "/api-keys", notice=f"The API key “{name}” is revoked.")

        self._forms.run(req, act)


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(ROOT + "/api-keys", KeyList(ctx, renderer))
    app.add_route(ROOT + "/api-keys/new", NewKey(ctx, renderer))
    app.add_route(ROOT + "/api-keys/{key_id}/rotate", KeyAction(ctx, renderer, "rotate"))
    app.add_route(ROOT + "/api-keys/{key_id}/revoke", KeyAction(ctx, renderer, "revoke"))
