"""The team (admins): people, their roles, and their API-key access, granted (to people with the user
role: view only has no API-key rights) or withdrawn (after a confirmation page naming the person as
the api has them: 404 for anyone not of the organization). Anyone else gets a 403 page."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.domain.people import TEAM
from dps_console.resources.context import AppContext
from dps_console.resources.forms import Done, FormActions
from dps_console.resources.web import ROOT, Cookies, Renderer, allowed, first, form_page_token, path_id
from dps_console.services.listed_items import find_listed
from dps_console.services.ports import ServiceApi


def find_person(api: ServiceApi, credential: str, person_id: str) -> dict[str, Any]:
    """The person as the api lists them to this admin (no single-person read): 404 when not of the organization."""
    found = find_listed(api, credential, "/people", "people", person_id)
    if found is None:
        raise falcon.HTTPNotFound()
    return found


class Team:
    inline_forms = True  # its buttons' one-time tokens come from the view token in its address (views)

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = allowed(req, TEAM)
        params = {"limit": "500"}
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.api.call("GET", "/people", session.credential, params=params)
        self._renderer.render(req, resp, "team.html", section="team", people=answer.get("people", []),
                              next_cursor=answer.get("nextCursor"))


class KeyAccess:
    """GET: confirm withdrawing, naming the person as the api has them; POST ``granted=true|false``:
    the change."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        session = allowed(req, TEAM)
        person_id = path_id(person_id)
        token = form_page_token(req)
        person = find_person(self._ctx.backends.api, session.credential, person_id)
        name = person.get("name") or person.get("email") or person_id
        self._renderer.render(
            req, resp, "confirm.html", section="team", title=f"Withdraw API-key access from {name}?",
            explanation="They can no longer issue, rotate or revoke API keys in the console. Keys they already "
                        "have keep working until revoked.",
            action=f"{ROOT}/team/{person_id}/api-key-access", button="Withdraw access", cancel=ROOT + "/team",
            fields={"granted": "false"}, form_token=token,
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        session = allowed(req, TEAM)
        granted = first(req.context.form, "granted") == "true"
        path = f"/people/{path_id(person_id)}/api-key-access"

        def change(token: str) -> Done:
            person = self._ctx.backends.api.call("PUT", path, session.credential, json={"granted": granted}, once=token)
            who = person.get("name") or person.get("email") or "The person"
            return Done(ROOT + "/team", notice=f"{who} {'now has' if granted else 'no longer has'} API-key access.")

        self._forms.run(req, change)


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(ROOT + "/team", Team(ctx, renderer))
    app.add_route(ROOT + "/team/{person_id}/api-key-access", KeyAccess(ctx, renderer))
