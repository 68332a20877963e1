"""Every state-changing form, one way: POST, then redirect (303), then GET, and one action per
submitted form (``services.form_results``). A form's one-time token (``once``, rendered by
``_forms.html``) claims the action; a repeat of the token goes where the first went. The token is
the ``Idempotency-Key`` of the call to the owning service. A secret the action answered is shown on
the page that follows, ``/shown-once/{token}``, from its sealed copy: once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import falcon

from dps_console.domain.tokens import looks_like_token
from dps_console.resources.context import AppContext
from dps_console.resources.web import ROOT, Cookies, Renderer, first, redirect, signed_in

SHOWN_ONCE = ROOT + "/shown-once"


@dataclass(frozen=True)
class Done:
    """What a form's action did: where the person goes next, and what they read there."""

    location: str
    notice: str | None = None
    page: dict[str, Any] | None = None  # a once-shown page's words (title, what, back, back_label, section)
    secret: str | None = None  # shown on that page once; None when the service replayed its answer


class FormActions:
    def __init__(self, ctx: AppContext):
        self._ctx = ctx

    def run(self, req: falcon.Request, act: Callable[[str], Done]) -> NoReturn:
        """Runs ``act(token)`` for the form's first submission and redirects where it says; a
        repeat is redirected where the first went, without acting. ``act`` raising (a service's
        refusal) leaves nothing done: the token may be sent again."""
        session = signed_in(req)
        token = first(req.context.form, "once")
        if not looks_like_token(token):
            raise falcon.HTTPBadRequest(title="This form is out of date",
                                        description="Open the page again and send the form from there.")
        results = self._ctx.form_results
        if not results.claim(session.id, token):
            location = results.earlier(session.id, token)
            if location is None:
                raise falcon.HTTPConflict(title="This form is still being sent",
                                          description="Wait a moment, then open the page again.")
            raise redirect(location)
        try:
            done = act(token)
        except BaseException:
            results.forget(session.id, token)
            raise
        location = done.location if done.page is None else f"{SHOWN_ONCE}/{token}"
        results.finish(session.id, token, location, page=done.page, secret=done.secret)
        if done.notice:
            self._ctx.sessions.note(session, done.notice)
        raise redirect(location)


def secret_of(answer: Any) -> str | None:
    """The secret of a service's answer; None in a replayed answer (``secretShownOnce``)."""
    value = answer.get("secret") if isinstance(answer, dict) else None
    return value if isinstance(value, str) and value else None


class ShownOncePage:
    """The page after an action that answered a secret (or the billing platform's start link):
    the secret on the first read, then "shown once"."""

    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        session = signed_in(req)
        shown = self._ctx.form_results.take(session.id, token) if looks_like_token(token) else None
        if shown is None:
            raise falcon.HTTPNotFound()
        page = shown.page
        words: dict[str, Any] = {k: page.get(k) for k in ("title", "what", "back", "back_label", "section", "gone")}
        if page.get("kind") == "continue" and shown.secret is not None:
            self._renderer.render(req, resp, "billing_continue.html", section=page.get("section"),
                                  title=page.get("title"), start_url=shown.secret)
            return
        self._renderer.render(req, resp, "secret.html", status=200, secret=shown.secret, **words)


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(SHOWN_ONCE + "/{token}", ShownOncePage(ctx, renderer))
