"""An endpoint's delivery log (newest first, filterable by status), one delivery with every attempt
and its request as sent (the body, pretty-printed and exactly; the headers with the signature), and a
retry."""

from __future__ import annotations

import json
from typing import Any

import falcon

from dps_console.domain.people import WEBHOOKS
from dps_console.resources.context import AppContext
from dps_console.resources.forms import Done, FormActions
from dps_console.resources.web import ROOT, Renderer, allowed, path_id

STATUSES = ("PENDING", "SUCCESS", "FAILED", "EXHAUSTED")


class Deliveries:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        params = {"limit": "50"}
        status = req.get_param("status") or ""
        if status in STATUSES:  # the dispatcher's filter: each page full of matches, its cursor bound to it
            params["status"] = status
        if req.get_param("cursor"):
            params["cursor"] = req.get_param("cursor") or ""
        answer = self._ctx.backends.webhooks.call(
            "GET", f"/webhook-configs/{path_id(endpoint_id)}/deliveries", session.credential, params=params)
        self._renderer.render(req, resp, "deliveries.html", section="webhooks", endpoint_id=endpoint_id,
                              deliveries=answer.get("deliveries", []), next_cursor=answer.get("nextCursor"),
                              statuses=STATUSES, status_filter=params.get("status", ""))


class Delivery:
    inline_forms = True  # its buttons' one-time tokens come from the view token in its address (views)

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str, delivery_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        delivery = self._ctx.backends.webhooks.call(
            "GET", f"/webhook-configs/{path_id(endpoint_id)}/deliveries/{path_id(delivery_id)}", session.credential)
        self._renderer.render(req, resp, "delivery.html", section="webhooks", endpoint_id=endpoint_id,
                              delivery=delivery, sent=as_sent(delivery))


def as_sent(delivery: dict[str, Any]) -> dict[str, Any] | None:
    """The request as the dispatcher sent it: method, URL, the exact body and the same pretty-printed,
    and the headers of the latest attempt that recorded them (each attempt is signed anew). None when
    the dispatcher gives no request."""
    request = delivery.get("request")
    if not isinstance(request, dict):
        return None
    body = request.get("body")
    pretty = None
    if isinstance(body, str):
        try:
            pretty = json.dumps(json.loads(body), indent=2, ensure_ascii=False)
        except ValueError:
            pretty = None
    recorded = [a for a in delivery.get("attempts") or [] if isinstance(a.get("requestHeaders"), dict)]
    latest = recorded[-1] if recorded else None
    return {
        "method": request.get("method") or "POST", "url": request.get("url") or "",
        "body": body if isinstance(body, str) else None, "pretty": pretty,
        "size": len(body.encode()) if isinstance(body, str) else None,
        "headers": latest["requestHeaders"] if latest else None, "headers_of": latest.get("attempt") if latest else None,
    }


class Retry:
    def __init__(self, ctx: AppContext):
        self._ctx = ctx
        self._forms = FormActions(ctx)

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str, delivery_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        path = f"/webhook-configs/{path_id(endpoint_id)}/deliveries/{path_id(delivery_id)}/retry"

        def retry(token: str) -> Done:
            retried = self._ctx.backends.webhooks.call("POST", path, session.credential, once=token)
            target = retried.get("id") if isinstance(retried, dict) else None
            return Done(f"{ROOT}/webhooks/{endpoint_id}/deliveries" + (f"/{target}" if target else ""),
                        notice="The delivery is sent again.")

        self._forms.run(req, retry)


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer) -> None:
    base = ROOT + "/webhooks/{endpoint_id}/deliveries"
    app.add_route(base, Deliveries(ctx, renderer))
    app.add_route(base + "/{delivery_id}", Delivery(ctx, renderer))
    app.add_route(base + "/{delivery_id}/retry", Retry(ctx))
