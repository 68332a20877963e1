"""Signing in with a one-time link, the home page, and signing out.

The link's GET only shows a "Sign in" button (mail scanners that open links use nothing up); its
POST uses the link and starts the session: a new cookie value, whatever the browser had."""

from __future__ import annotations

import falcon

from dps_console.resources.context import AppContext
from dps_console.resources.web import ROOT, Cookies, Renderer, first, redirect, signed_in
from dps_console.services.sign_in import LinkRequest, normalize_email


def client_address(req: falcon.Request, trusted_hops: int) -> str:
    """The client's address: the socket's peer, or with ``trusted_hops`` proxies in front (the
    ingress), the X-Forwarded-For entry the nearest trusted proxy added."""
    if trusted_hops <= 0:
        return req.remote_addr or "unknown"
    forwarded = [a.strip() for a in (req.get_header("X-Forwarded-For") or "").split(",") if a.strip()]
    chain = [*forwarded, req.remote_addr or "unknown"]
    return chain[max(0, len(chain) - 1 - trusted_hops)]


class Home:
    def __init__(self, renderer: Renderer):
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        signed_in(req)
        self._renderer.render(req, resp, "home.html", section="home")


class SignIn:
    def __init__(self, ctx: AppContext, renderer: Renderer):
        self._ctx = ctx
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.context.session is not None:
            raise redirect(ROOT)
        ended = req.get_param("ended") is not None
        signed_out = req.get_param("signed_out") is not None
        self._renderer.render(req, resp, "sign_in.html", ended=ended, signed_out=signed_out, email="", errors={})

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        raw = first(req.context.form, "email")
        email = normalize_email(raw)
        if email is None:
            self._renderer.render(req, resp, "sign_in.html", status=400, email=raw,
                                  errors={"email": ["Enter an email address, like name@example.com."]})
            return
        outcome = self._ctx.email_links.request(email, client_address(req, self._ctx.settings.trusted_proxy_hops))
        if outcome is LinkRequest.RATE_LIMITED:
            self._renderer.render(req, resp, "error.html", status=429, title="Too many sign-in requests",
                                  message="Wait a few minutes, then ask for a new link.")
            return
        raise redirect(ROOT + "/sign-in/sent")


class SignInSent:
    def __init__(self, renderer: Renderer):
        self._renderer = renderer

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._renderer.render(req, resp, "sign_in_sent.html")


class SignInLink:
    def __init__(self, ctx: AppContext, renderer: Renderer, cookies: Cookies):
        self._ctx = ctx
        self._renderer = renderer
        self._cookies = cookies

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        token = req.get_param("token")
        if not self._ctx.email_links.usable(token):
            self._invalid(req, resp)
            return
        self._renderer.render(req, resp, "sign_in_link.html", token=token)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        who = self._ctx.email_links.redeem(first(req.context.form, "token"))
        active = self._ctx.sessions.start(who) if who is not None else None
        if active is None:
            self._invalid(req, resp)
            return
        if req.context.session is not None:  # signed in already: that session ends, this one replaces it
            self._ctx.sessions.end(req.context.session)
        self._cookies.start_session(req, resp, active.cookie)
        self._cookies.clear(resp, self._cookies.pre_session)
        raise redirect(ROOT)

    def _invalid(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._renderer.render(req, resp, "error.html", status=400, title="This sign-in link does not work",
                              message="It was used already, has expired (links last 15 minutes) or is not a link "
                                      "we sent.", sign_in_again=True)


class SignOut:
    def __init__(self, ctx: AppContext, cookies: Cookies):
        self._ctx = ctx
        self._cookies = cookies

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = req.context.session
        if session is not None:
            self._ctx.sessions.end(session)
        self._cookies.clear(resp, self._cookies.session)
        raise redirect(ROOT + "/sign-in?signed_out=1")


def register(app: falcon.App[falcon.Request, falcon.Response], ctx: AppContext, renderer: Renderer,
             cookies: Cookies) -> None:
    app.add_route(ROOT, Home(renderer))
    app.add_route(ROOT + "/sign-in", SignIn(ctx, renderer))
    app.add_route(ROOT + "/sign-in/sent", SignInSent(renderer))
    app.add_route(ROOT + "/sign-in/link", SignInLink(ctx, renderer, cookies))
    app.add_route(ROOT + "/sign-out", SignOut(ctx, cookies))
