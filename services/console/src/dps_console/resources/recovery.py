"""Recover failed deliveries since a time (``POST /webhook-configs/{id}/recover``): the form on the
endpoint page posts here; the answer ("12 deliveries will be sent again, oldest first") is the notice
of the page that follows. When more remain (the dispatcher sends at most 1,000 a call), that page is
this one's, the same window filled in, to continue. A refusal (a disabled endpoint, a time outside
the 30-day history) is shown on this page, in a person's words, beside the field it names."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import falcon

from dps_console.domain.people import WEBHOOKS
from dps_console.domain.problems import ServiceRefused
from dps_console.domain.recovery import RETENTION_DAYS, field_value, form_time, recovered_words, rfc3339
from dps_console.domain.tokens import new_token
from dps_console.resources.context import AppContext
from dps_console.resources.formatting import parse_time
from dps_console.resources.forms import Done, FormActions
from dps_console.resources.web import ROOT, Renderer, allowed, first, path_id

FIELDS = ("since", "until")
SINCE_MISSING = "Enter the time from which to recover, in UTC."
UNTIL_NOT_A_TIME = "Enter a time in UTC, or leave it empty to recover up to now."
TIME_WORDS = {  # the dispatcher names the field; a person reads what to change
    "since": f"Enter a time within the last {RETENTION_DAYS} days (the delivery history kept), before the end.",
    "until": f"Enter a time after the start and within the last {RETENTION_DAYS} days, or leave it empty.",
}


class Recover:
    inline_forms = True  # the continue form's one-time token comes from the view token in its address

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        endpoint = self._endpoint(session.credential, endpoint_id)
        values = {name: _shown(req.get_param(name) or "") for name in FIELDS}
        self._page(req, resp, endpoint, values, continuing=bool(values["since"]))

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        endpoint_id = path_id(endpoint_id)
        form = req.context.form
        values = {name: first(form, name).strip() for name in FIELDS}
        since, until = form_time(values["since"]), form_time(values["until"])
        errors: dict[str, list[str]] = {}
        if since is None:
            errors["since"] = [SINCE_MISSING]
        if values["until"] and until is None:
            errors["until"] = [UNTIL_NOT_A_TIME]
        if errors:
            endpoint = self._endpoint(session.credential, endpoint_id)
            self._page(req, resp, endpoint, values, errors=errors, status=400, token=new_token())
            return
        assert since is not None
        body = {"since": rfc3339(since), **({"until": rfc3339(until)} if until else {})}
        path = f"/webhook-configs/{endpoint_id}/recover"

        def recover(token: str) -> Done:
            answer = self._ctx.backends.webhooks.call("POST", path, session.credential, json=body, once=token)
            recovered, more = int(answer.get("recovered") or 0), bool(answer.get("hasMore"))
            words = recovered_words(recovered, more)
            if not more:
                return Done(f"{ROOT}/webhooks/{endpoint_id}", notice=words)
            # the same window to continue: its end as the dispatcher fixed it (now moves on)
            end = parse_time(answer.get("until")) or until
            window = {"since": field_value(since), **({"until": field_value(end)} if end else {})}
            return Done(f"{ROOT}/webhooks/{endpoint_id}/recover?{urlencode(window)}", notice=words)

        try:
            self._forms.run(req, recover)
        except ServiceRefused as refused:
            if refused.problem.status not in (400, 409, 422):
                raise
            endpoint = self._endpoint(session.credential, endpoint_id)
            problem, placed = self._refusal(endpoint, refused)
            self._page(req, resp, endpoint, values, errors=placed, problem=problem, status=refused.problem.status,
                       token=new_token())

    def _endpoint(self, credential: str, endpoint_id: str) -> dict[str, Any]:
        endpoint: dict[str, Any] = self._ctx.backends.webhooks.call(
            "GET", f"/webhook-configs/{path_id(endpoint_id)}", credential)
        return endpoint

    @staticmethod
    def _refusal(endpoint: dict[str, Any], refused: ServiceRefused) -> tuple[str | None, dict[str, list[str]]]:
        """The page's message and the fields' messages for the dispatcher's refusal."""
        problem = refused.problem
        if problem.status == 409:
            return refused_words(endpoint) or problem.message, {}
        placed = {name: [TIME_WORDS[name]] for name in problem.fields if name in TIME_WORDS}
        rest = [m for name, ms in problem.fields.items() if name not in TIME_WORDS for m in ms]
        if placed and not rest:
            return None, placed
        return "; ".join(rest) or problem.message, placed

    def _page(self, req: falcon.Request, resp: falcon.Response, endpoint: dict[str, Any], values: dict[str, str], *,
              errors: dict[str, list[str]] | None = None, problem: str | None = None, status: int = 200,
              token: str | None = None, continuing: bool = False) -> None:
        self._renderer.render(req, resp, "recover.html", status=status, section="webhooks", endpoint=endpoint,
                              values=values, errors=errors or {}, problem=problem, form_token=token,
                              continuing=continuing, refused=refused_words(endpoint))


def refused_words(endpoint: dict[str, Any]) -> str | None:
    """Why this endpoint's failed deliveries cannot be sent again now (None: they can)."""
    if endpoint.get("revokedAt"):
        return "This endpoint is revoked: nothing is delivered to it any more."
    if endpoint.get("status") != "DISABLED":
        return None
    said = "This endpoint is disabled, so nothing can be sent to it: re-activate it first, then recover its failed deliveries."
    reason = endpoint.get("disabledReason")
    return said + (f" It was disabled because: {reason}" if reason else "")


def _shown(value: str) -> str:
    """A time from the page's address, shown in a field only when it is one."""
    moment: datetime | None = form_time(value)
    return field_value(moment) if moment else ""


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer) -> None:
    app.add_route(ROOT + "/webhooks/{endpoint_id}/recover", Recover(ctx, renderer))
