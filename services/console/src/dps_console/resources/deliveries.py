"""An endpoint's delivery log (newest first, filterable by status), one delivery with every attempt,
and a retry."""

from __future__ import annotations

import falcon

from dps_console.context import AppContext
from dps_console.resources.web import ROOT, Renderer, path_id, redirect, signed_in

STATUSES = ("PENDING", "SUCCESS", "FAILED", "EXHAUSTED")


class Deliveries:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = signed_in(req)
        params = {"limit": "50"}
        status = req.get_param("status") or ""
        if status in STATUSES:
            params["status"] = status
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.webhooks.call(
            "GET", f"/webhook-configs/{path_id(endpoint_id)}/deliveries", session.credential, params=params)
        self._renderer.render(req, resp, "deliveries.html", section="webhooks", endpoint_id=endpoint_id,
                              deliveries=answer.get("deliveries", []), next_cursor=answer.get("nextCursor"),
                              statuses=STATUSES, status_filter=params.get("status", ""))


class Delivery:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str, delivery_id: str) -> None:
        session = signed_in(req)
        delivery = self._ctx.backends.webhooks.call(
            "GET", f"/webhook-configs/{path_id(endpoint_id)}/deliveries/{path_id(delivery_id)}", session.credential)
        self._renderer.render(req, resp, "delivery.html", section="webhooks", endpoint_id=endpoint_id,
                              delivery=delivery)


class Retry:
    def __init__(self, ctx: AppContext):
        self._ctx = ctx

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str, delivery_id: str) -> None:
        session = signed_in(req)
        retried = self._ctx.backends.webhooks.call(
            "POST", f"/webhook-configs/{path_id(endpoint_id)}/deliveries/{path_id(delivery_id)}/retry",
            session.credential)
        self._ctx.sessions.note(session, "The delivery is sent again.")
        target = retried.get("id") if isinstance(retried, dict) else None
        raise redirect(f"{ROOT}/webhooks/{endpoint_id}/deliveries" + (f"/{target}" if target else ""))


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer) -> None:
    base = ROOT + "/webhooks/{endpoint_id}/deliveries"
    app.add_route(base, Deliveries(ctx, renderer))
    app.add_route(base + "/{delivery_id}", Delivery(ctx, renderer))
    app.add_route(base + "/{delivery_id}/retry", Retry(ctx))
