"""The team (admins): people, their roles, and their API-key access, granted or withdrawn
(withdrawing after a confirmation page). The api refuses anyone else (403), and the page says so."""

from __future__ import annotations

import falcon

from dps_console.context import AppContext
from dps_console.resources.web import ROOT, Cookies, Renderer, first, path_id, redirect, signed_in


class Team:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = signed_in(req)
        params = {"limit": "500"}
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.api.call("GET", "/people", session.credential, params=params)
        self._renderer.render(req, resp, "team.html", section="team", people=answer.get("people", []),
                              next_cursor=answer.get("nextCursor"))


class KeyAccess:
    """GET: confirm withdrawing; POST ``granted=true|false``: the change."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        signed_in(req)
        person_id = path_id(person_id)
        name = req.get_param("name") or person_id
        self._renderer.render(
            req, resp, "confirm.html", section="team", title=f"Withdraw API-key access from {name}?",
            explanation="They can no longer issue, rotate or revoke API keys in the console. Keys they already "
                        "have keep working until revoked.",
            action=f"{ROOT}/team/{person_id}/api-key-access", button="Withdraw access", cancel=ROOT + "/team",
            fields={"granted": "false"},
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        session = signed_in(req)
        granted = first(req.context.form, "granted") == "true"
        person = self._ctx.backends.api.call("PUT", f"/people/{path_id(person_id)}/api-key-access", session.credential,
                                             json={"granted": granted})
        who = person.get("name") or person.get("email") or "The person"
        self._ctx.sessions.note(session, f"{who} {'now has' if granted else 'no longer has'} API-key access.")
        raise redirect(ROOT + "/team")


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(ROOT + "/team", Team(ctx, renderer))
    app.add_route(ROOT + "/team/{person_id}/api-key-access", KeyAccess(ctx, renderer))
