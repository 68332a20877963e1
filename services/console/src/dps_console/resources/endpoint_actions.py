"""The actions on one webhook endpoint: pause, resume, re-activate, send a test (buttons of its page),
rotate the signing secret (shown once, after the redirect) and revoke (``/delete``: DELETE at the
dispatcher, "revocation" in the spec), each of these two after a confirmation page naming the
endpoint as the dispatcher has it (404 for an id not of the organization). Every one is POST,
redirect, GET, once per submitted form (``forms``)."""

from __future__ import annotations

from typing import Any

import falcon

from dps_console.domain.people import WEBHOOKS
from dps_console.resources.context import AppContext
from dps_console.resources.forms import Done, FormActions, secret_of
from dps_console.resources.web import ROOT, Renderer, allowed, form_page_token, path_id

STATUS_ACTIONS = {"pause": "PAUSED", "resume": "ACTIVE", "reactivate": "ACTIVE"}
DONE_WORDS = {"pause": "paused", "resume": "resumed", "reactivate": "active again"}
GONE = ("The console does not keep it: if you did not copy it, rotate the endpoint's signing secret to get a "
        "new one.")


def secret_page(title: str, endpoint: dict[str, Any], back_label: str) -> dict[str, Any]:
    """The words of the page that shows an endpoint's signing secret once."""
    return {"section": "webhooks", "title": title, "what": f"The endpoint {endpoint.get('url', '')}",
            "back": f"{ROOT}/webhooks/{endpoint.get('id', '')}", "back_label": back_label, "gone": GONE}


class StatusChange:
    def __init__(self, ctx: AppContext, action: str):
        self._ctx = ctx
        self._action = action
        self._forms = FormActions(ctx)

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        path = f"/webhook-configs/{path_id(endpoint_id)}"

        def change(token: str) -> Done:
            self._ctx.backends.webhooks.call("PUT", path, session.credential, once=token,
                                             json={"status": STATUS_ACTIONS[self._action]})
            return Done(f"{ROOT}/webhooks/{endpoint_id}", notice=f"The endpoint is {DONE_WORDS[self._action]}.")

        self._forms.run(req, change)


class SendTest:
    def __init__(self, ctx: AppContext):
        self._ctx = ctx
        self._forms = FormActions(ctx)

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        path = f"/webhook-configs/{path_id(endpoint_id)}/test"

        def send(token: str) -> Done:
            self._ctx.backends.webhooks.call("POST", path, session.credential, once=token)
            return Done(f"{ROOT}/webhooks/{endpoint_id}", notice="A test event is on its way: see the delivery log.")

        self._forms.run(req, send)


class Confirmed:
    """A destructive action: GET is its confirmation page, naming the endpoint; POST does it."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer
        self._forms = FormActions(ctx)

    def _confirm(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str, **words: str) -> None:
        session = allowed(req, WEBHOOKS)
        endpoint_id = path_id(endpoint_id)
        token = form_page_token(req)
        endpoint = self._ctx.backends.webhooks.call("GET", f"/webhook-configs/{endpoint_id}", session.credential)
        if endpoint.get("revokedAt"):
            raise falcon.HTTPConflict(title="This endpoint is revoked",
                                      description="A revoked endpoint cannot be changed any more.")
        self._renderer.render(req, resp, "confirm.html", section="webhooks", form_token=token,
                              title=words["title"].format(url=endpoint.get("url", "")),
                              explanation=words["explanation"], button=words["button"],
                              action=f"{ROOT}/webhooks/{endpoint_id}/{words['action']}",
                              cancel=f"{ROOT}/webhooks/{endpoint_id}")


class RotateSecret(Confirmed):
    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        self._confirm(req, resp, endpoint_id, action="rotate-secret", button="Rotate secret",
                      title="Rotate the signing secret of the endpoint {url}?",
                      explanation="A new secret is shown once. Deliveries are signed with the new secret from now "
                                  "on: update your receiver.")

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        path = f"/webhook-configs/{path_id(endpoint_id)}/rotate-secret"

        def rotate(token: str) -> Done:
            rotated = self._ctx.backends.webhooks.call("POST", path, session.credential, once=token)
            page = secret_page("Signing secret rotated", {"id": endpoint_id, **rotated}, "Back to the endpoint")
            return Done(f"{ROOT}/webhooks/{endpoint_id}", page=page, secret=secret_of(rotated))

        self._forms.run(req, rotate)


class Revoke(Confirmed):
    def on_get(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        self._confirm(req, resp, endpoint_id, action="delete", button="Revoke endpoint",
                      title="Revoke the webhook endpoint {url}?",
                      explanation="No more events are delivered to it, and it cannot be used again. This cannot "
                                  "be undone.")

    def on_post(self, req: falcon.Request, resp: falcon.Response, endpoint_id: str) -> None:
        session = allowed(req, WEBHOOKS)
        path = f"/webhook-configs/{path_id(endpoint_id)}"

        def revoke(token: str) -> Done:
            self._ctx.backends.webhooks.call("DELETE", path, session.credential, once=token)
            return Done(ROOT + "/webhooks", notice="The endpoint is revoked.")

        self._forms.run(req, revoke)


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer) -> None:
    base = ROOT + "/webhooks/{endpoint_id}"
    for action in STATUS_ACTIONS:
        app.add_route(f"{base}/{action}", StatusChange(ctx, action))
    app.add_route(base + "/test", SendTest(ctx))
    app.add_route(base + "/rotate-secret", RotateSecret(ctx, renderer))
    app.add_route(base + "/delete", Revoke(ctx, renderer))
