"""Webhook endpoints: the list, one endpoint, create and edit (event types picked from the dispatcher's
catalogue; a new endpoint's secret shown once, after the redirect); the event catalogue. The actions
on one endpoint (pause, resume, re-activate, rotate the secret, send a test, revoke) are in
``endpoint_actions``, deliveries in ``deliveries``. Admins only: anyone else gets a 403 page."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.domain.people import WEBHOOKS
from dps_console.domain.problems import Problem, ServiceRefused, ServiceUnavailable
from dps_console.domain.tokens import new_token
from dps_console.domain.traffic import WINDOWS, Hour, chart, duration_words, time_to_success_words, window_of
from dps_console.resources import deliveries, endpoint_actions, recovery, traffic_svg
from dps_console.resources.context import AppContext
from dps_console.resources.endpoint_actions import secret_page
from dps_console.resources.formatting import parse_time
from dps_console.resources.forms import Done, FormActions, secret_of
from dps_console.resources.listing import endpoint_status, filter_by_status
from dps_console.resources.web import ROOT, Cookies, Renderer, allowed, first, form_page_token, path_id, signed_in

FORM_FIELDS = ("url", "description", "eventTypes", "rateLimitPerSecond")
FIELDS_MARKED = "The endpoint is not saved: check the fields marked below."
RATE_LIMIT_WORDS = "Enter a whole number of requests per second from 1 to 1000, or leave it empty for no limit."
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
        endpoint_id = path_id(endpoint_id)
        window = window_of(req.get_param("window"))
        # the traffic does not depend on the endpoint's answer: both asked at once, the page's time
        # is the longer call's rather than their sum; the endpoint's refusal still decides the page
        traffic = self._ctx.alongside.start(lambda: self._traffic(session.credential, endpoint_id, window))
        try:
            endpoint = self._ctx.backends.webhooks.call("GET", f"/webhook-configs/{endpoint_id}", session.credential)
        except BaseException:
            traffic.cancel()
            raise
        self._renderer.render(req, resp, "webhook.html", section="webhooks", endpoint=endpoint, window=window,
                              windows=WINDOWS, traffic=traffic.result(), refused=recovery.refused_words(endpoint))

    def _traffic(self, credential: str, endpoint_id: str, window: str) -> dict[str, Any] | None:
        """The endpoint's attempts per hour (``/stats``) as the page draws them; None when the dispatcher
        could not answer them (the rest of the page still shows)."""
        try:
            stats = self._ctx.backends.webhooks.call("GET", f"/webhook-configs/{endpoint_id}/stats", credential,
                                                     params={"window": window})
        except ServiceRefused as refused:
            if refused.problem.status == 401:
                raise
            return None
        except ServiceUnavailable:
            return None
        hours = [Hour(start, int(h.get("succeeded") or 0), int(h.get("failed") or 0))
                 for h in stats.get("hours") or [] if (start := parse_time(h.get("start"))) is not None]
        times = stats.get("timeToSuccessMs") or {}
        drawn = chart(hours)
        return {
            "chart": drawn, "hours": hours, "bars_svg": traffic_svg.bars(drawn), "rows": traffic_svg.hourly_rows(hours), "from": stats.get("from"), "until": stats.get("until"),
            "succeeded": int(stats.get("succeeded") or 0), "failed": int(stats.get("failed") or 0),
            "busiest": max((h.succeeded + h.failed for h in hours), default=0),
            "p50": duration_words(times.get("p50")) if times.get("p50") is not None else None,
            "p95": duration_words(times.get("p95")) if times.get("p95") is not None else None,
            "time_to_success": time_to_success_words(times.get("p50"), times.get("p95")),
        }


def _body(form: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "url": first(form, "url").strip(),
        "description": first(form, "description").strip(),
        "eventTypes": [t for t in form.get("eventTypes", []) if t],
        "rateLimitPerSecond": _rate_limit(first(form, "rateLimitPerSecond")),
    }


def _rate_limit(value: str) -> int | str | None:
    """Blank: no limit (null). A whole number goes as a number (the dispatcher checks its range, 1 to
    1000); anything else stays the text typed, refused by the form itself."""
    text = value.strip()
    if not text:
        return None
    return int(text) if text.isascii() and text.isdigit() else text


def _message(problem: Problem) -> str:
    """The form's message: the service's, but for the rate limit, whose detail names its type rules."""
    return FIELDS_MARKED if "rateLimitPerSecond" in problem.fields else problem.message


def _placed(problem: Problem) -> dict[str, list[str]]:
    """The service's field messages, the rate limit's in the console's words (the service's speak of types)."""
    fields = dict(problem.fields)
    if "rateLimitPerSecond" in fields:
        fields["rateLimitPerSecond"] = [RATE_LIMIT_WORDS]
    return fields


class EndpointForm:
    """``/webhooks/new`` creates (the secret shown once, after the redirect); ``/webhooks/{id}/edit`` updates."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None = None) -> None:
        session = allowed(req, WEBHOOKS)
        token = form_page_token(req)
        values: dict[str, Any] = {"url": "", "description": "", "eventTypes": [], "rateLimitPerSecond": None}
        if endpoint_id is not None:
            values = self._ctx.backends.webhooks.call(
                "GET", f"/webhook-configs/{path_id(endpoint_id)}", session.credential)
        self._form(req, resp, endpoint_id, values, token=token)

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str | None = None) -> None:
        session = allowed(req, WEBHOOKS)
        body = _body(req.context.form)
        webhooks = self._ctx.backends.webhooks
        if isinstance(body["rateLimitPerSecond"], str):  # not a whole number: nothing to send
            refused = Problem(400, fields={"rateLimitPerSecond": [RATE_LIMIT_WORDS]})
            self._form(req, resp, endpoint_id, body, refused, status=400)
            return

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
            errors=_placed(problem) if problem else {}, problem=_message(problem) if problem else None,
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
    recovery.register(app, ctx, renderer)
    deliveries.register(app, ctx, renderer)
