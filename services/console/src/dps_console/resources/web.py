"""What every page shares: the security headers, the session and CSRF checks (middleware), the form
body, rendering a template, redirects and the error pages.

- Every response: a strict CSP (``default-src 'self'``, no inline script or style), ``no-store``,
  no framing, no referrer.
- Every POST: refused (403) when the browser says it is cross-site (Origin, Sec-Fetch-Site) or when
  its ``csrf`` field is not the HMAC of the cookie it came with (the session's, or before sign-in the
  pre-session cookie's).
- Every page with inline action forms (a resource with ``inline_forms = True``) is a view with its
  own token in its address, its buttons' one-time tokens derived from it (``views``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import falcon
from jinja2 import Environment, PackageLoader, select_autoescape

from dps_common.clock import utc_now

from dps_console.domain.csrf import cross_site, csrf_token, csrf_valid
from dps_console.domain.problems import Problem, ServiceRefused, ServiceUnavailable
from dps_console.domain.tokens import looks_like_token, new_token
from dps_console.resources import formatting
from dps_console.resources.views import inline_tokens
from dps_console.services.sessions import ActiveSession, Sessions
from dps_console.settings import Settings

ROOT = "/console"
log = logging.getLogger("dps.console.web")

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    ),
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
}
MAX_FORM_BYTES = 64 * 1024
_LONG_AGO = datetime(1970, 1, 1, tzinfo=UTC)


class Cookies:
    def __init__(self, settings: Settings):
        self.secure = settings.https
        prefix = "__Host-" if self.secure else ""
        self.session = prefix + "dps_console"
        self.pre_session = prefix + "dps_console_pre"

    def set(self, resp: falcon.Response, name: str, value: str) -> None:
        resp.set_cookie(name, value, path="/", secure=self.secure, http_only=True, same_site="Lax")

    def clear(self, resp: falcon.Response, name: str) -> None:
        # An expiry in the past, with the attributes it was set with: Falcon writes no Max-Age=0, and a
        # __Host- cookie is only replaced by one that is Secure with Path=/.
        resp.set_cookie(name, "", expires=_LONG_AGO, path="/", secure=self.secure, http_only=True, same_site="Lax")

    def read(self, req: falcon.Request, name: str) -> str | None:
        values = req.get_cookie_values(name)
        return values[0] if values else None

    def start_session(self, req: falcon.Request, resp: falcon.Response, value: str) -> None:
        """The new session's cookie; the browser's stale one (if any) is then replaced, not cleared
        (``ConsoleMiddleware.process_response``)."""
        self.set(resp, self.session, value)
        req.context.session_cookie_set = True


class ConsoleMiddleware:
    def __init__(self, settings: Settings, sessions: Sessions, cookies: Cookies, csrf_key: bytes, renderer: "Renderer"):
        self._origin = settings.public_origin
        self._sessions = sessions
        self._cookies = cookies
        self._csrf_key = csrf_key
        self._renderer = renderer

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.session = None
        req.context.form = {}
        page = req.path == ROOT or req.path.startswith(ROOT + "/")
        if not page or req.path.startswith(ROOT + "/static/") or req.path in (ROOT + "/healthz", FAVICON_PATH):
            return
        cookie = self._cookies.read(req, self._cookies.session)
        req.context.session = self._sessions.load(cookie, take_notice=req.method == "GET")
        # cleared on the way out unless the page sets a new one: a cookie set twice on one response
        # keeps the first one's attributes (its 1970 expiry), and a sign-in would set a dead cookie
        req.context.stale_session_cookie = req.context.session is None and cookie is not None
        pre = self._cookies.read(req, self._cookies.pre_session)
        if req.context.session is None and pre is None and req.method == "GET":
            pre = new_token()
            self._cookies.set(resp, self._cookies.pre_session, pre)
        session: ActiveSession | None = req.context.session
        req.context.csrf_binding = session.cookie if session else pre
        if req.method != "POST":
            return
        if cross_site(req.get_header("Origin"), req.get_header("Sec-Fetch-Site"), self._origin):
            log.info("cross-site POST refused", extra={"route": req.path})
            raise falcon.HTTPForbidden(title="Refused: this form was sent from another site.")
        req.context.form = read_form(req)
        if not csrf_valid(self._csrf_key, req.context.csrf_binding, first(req.context.form, "csrf")):
            log.info("POST without a valid CSRF token refused", extra={"route": req.path})
            raise falcon.HTTPForbidden(
                title="Refused: the form is out of date or was not sent from this console. Open the page again."
            )

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool) -> None:
        for name, value in SECURITY_HEADERS.items():
            resp.set_header(name, value)
        if req.context.get("stale_session_cookie") and not req.context.get("session_cookie_set"):
            self._cookies.clear(resp, self._cookies.session)


def read_form(req: falcon.Request) -> dict[str, list[str]]:
    if (req.content_type or "").split(";")[0].strip().lower() != falcon.MEDIA_URLENCODED:
        return {}
    raw = req.bounded_stream.read(MAX_FORM_BYTES + 1)
    if len(raw) > MAX_FORM_BYTES:
        raise falcon.HTTPContentTooLarge(title="The form is too large.")
    return parse_qs(raw.decode("utf-8", errors="replace"), keep_blank_values=True)


def first(form: dict[str, list[str]], name: str, default: str = "") -> str:
    values = form.get(name)
    return values[0] if values else default


class Renderer:
    def __init__(self, csrf_key: bytes, inline_forms_key: bytes, now: Callable[[], datetime] = utc_now):
        self._csrf_key = csrf_key
        self._inline_forms_key = inline_forms_key
        self.env = Environment(
            loader=PackageLoader("dps_console", "templates"),
            autoescape=select_autoescape(["html"], default_for_string=True, default=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals["root"] = ROOT
        self.env.filters["external_url"] = external_url
        formatting.install(self.env, now)

    def render(self, req: falcon.Request, resp: falcon.Response, template: str, *,
               status: int = 200, **values: Any) -> None:
        session: ActiveSession | None = req.context.get("session")
        binding = req.context.get("csrf_binding")
        resp.status = status
        resp.content_type = "text/html; charset=utf-8"
        resp.text = self.env.get_template(template).render(
            person=session.person if session else None,
            notice=session.notice if session else None,
            csrf=csrf_token(self._csrf_key, binding) if binding else "",
            inline_token=inline_tokens(self._inline_forms_key, session, req.context.get("view")),
            **values,
        )


def redirect(to: str) -> falcon.HTTPSeeOther:
    """POST, then redirect, then GET: ``raise redirect(ROOT + '/api-keys')``."""
    return falcon.HTTPSeeOther(to)


def signed_in(req: falcon.Request) -> ActiveSession:
    session: ActiveSession | None = req.context.get("session")
    if session is None:
        raise redirect(ROOT + "/sign-in")
    return session


def allowed(req: falcon.Request, part: str) -> ActiveSession:
    """The signed-in person, when their role may use ``part`` of the console (``Person.may_use``);
    otherwise a 403 page saying what they cannot do and whom to ask, with no form."""
    session = signed_in(req)
    if not session.person.may_use(part):
        raise falcon.HTTPForbidden(title="Not allowed", description=session.person.refusal(part))
    return session


def form_page_token(req: falcon.Request) -> str:
    """The one-time token of a page that is one form (an issue form, a confirmation): carried in the
    page's own address (``?form=``), so the page shown again by Back holds the same token, and
    sending it again is a repeat, not a second action. Opened without one: redirected to a fresh one."""
    token = req.get_param("form")
    if token is not None and looks_like_token(token):
        return token
    raise falcon.HTTPFound(f"{req.path}?form={new_token()}")


def install_error_pages(app: falcon.App[falcon.Request, falcon.Response], renderer: Renderer,
                        sessions: Sessions, cookies: Cookies) -> None:
    def http_error(req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError, params: dict[str, Any]) -> None:
        status = ex.status_code
        title = ex.title if status not in (404, 405) else {404: "Page not found", 405: "Not allowed here"}[status]
        renderer.render(req, resp, "error.html", status=status, title=title, message=ex.description or "")
        for name, value in dict(ex.headers or {}).items():
            resp.set_header(name, value)

    def refused(req: falcon.Request, resp: falcon.Response, ex: ServiceRefused, params: dict[str, Any]) -> None:
        problem = ex.problem
        if problem.status == 401:  # the credential is gone (revoked, expired, access withdrawn)
            session: ActiveSession | None = req.context.get("session")
            if session is not None:
                sessions.end(session)
            cookies.clear(resp, cookies.session)
            resp.status = falcon.HTTP_303
            resp.location = ROOT + "/sign-in?ended=1"
            resp.text = ""
            return
        show_error(renderer, req, resp, problem, ex.service)

    def unavailable(req: falcon.Request, resp: falcon.Response, ex: ServiceUnavailable, params: dict[str, Any]) -> None:
        renderer.render(req, resp, "error.html", status=502, title="A service did not answer",
                        message=f"The {ex.service} did not answer. Try again in a moment.")

    def unexpected(req: falcon.Request, resp: falcon.Response, ex: Exception, params: dict[str, Any]) -> None:
        log.exception("unexpected error", extra={"route": req.path})
        renderer.render(req, resp, "error.html", status=500, title="Something went wrong",
                        message="The console could not show this page. Try again; if it persists, tell your administrator.")

    app.add_error_handler(Exception, unexpected)
    app.add_error_handler(falcon.HTTPError, http_error)
    app.add_error_handler(ServiceRefused, refused)
    app.add_error_handler(ServiceUnavailable, unavailable)


def show_error(renderer: Renderer, req: falcon.Request, resp: falcon.Response, problem: Problem, service: str) -> None:
    if problem.status == 404:
        renderer.render(req, resp, "error.html", status=404, title="Page not found",
                        message="There is nothing here, or it belongs to another organization.")
    elif problem.status >= 500:
        renderer.render(req, resp, "error.html", status=502, title="A service could not answer",
                        message=f"The {service} could not answer ({problem.status}). Try again in a moment.")
    else:
        session: ActiveSession | None = req.context.get("session")
        title, message = refusal_words(problem, session.person.role if session else "")
        organization = session.person.organization_name if session else ""
        renderer.render(req, resp, "error.html", status=problem.status, title=title, message=message,
                        ask=problem.status == 403, organization=organization,
                        developer={"service": service, "status": problem.status, "code": problem.code,
                                   "detail": problem.message})


REFUSALS = {
    "missing_scope": "Your role{role} does not allow this.",
    "role_too_high": "A key cannot have a higher role than your own{role}.",
    "not_quote_owner": "Only the quote's owner or an administrator can do this.",
}


def refusal_words(problem: Problem, role: str) -> tuple[str, str]:
    """A service's refusal as a person reads it: what they cannot do here (the code and the
    service's own words go to the page's details for a developer)."""
    if problem.status == 403:
        said = REFUSALS.get(problem.code, "You are not allowed to do this.")
        return "You cannot do this here", said.format(role=f" ({role})" if role else "")
    if problem.status == 429:
        return "Too many requests", "Wait a minute, then try again."
    if problem.status == 409:
        return "This cannot be done now", "It conflicts with the item's current state. Open it again to see where it stands."
    return "This could not be done", "What was sent is not accepted. Go back, check the form and try again."


FAVICON_PATH = ROOT + "/favicon.ico"
_FAVICON = Path(__file__).resolve().parents[1] / "static" / "favicon.svg"


class Favicon:
    """``/console/favicon.ico``, which browsers ask for by themselves: the console's SVG icon (the
    pages link it as ``static/favicon.svg``), so no page load ends in a 404."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "image/svg+xml"
        resp.data = _FAVICON.read_bytes()


def path_id(value: str) -> str:
    """An id from the URL, checked before it goes into a service's URL (404 otherwise)."""
    if not value or len(value) > 100 or not all(c.isascii() and (c.isalnum() or c in "-_") for c in value):
        raise falcon.HTTPNotFound()
    return value


def external_url(value: object) -> str:
    """A link from a service's answer, kept only when it is http(s) (never ``javascript:``)."""
    return value if isinstance(value, str) and value.startswith(("https://", "http://")) else ""
