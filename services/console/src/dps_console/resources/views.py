"""Pages of buttons (inline action forms: Send a test event, Retry, Grant access, Connect ...) are
views: each carries a token in its address (``?view=``), and each button's one-time token is derived
from the session, the view and the button's form. The pages are ``no-store``, so Back fetches the
view again; it then holds the same tokens, and pressing again is a repeat of the first press
(``forms``), not a second action. The page an action leads to is a fresh view: a deliberate second
press there acts again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from dps_console.domain.tokens import derived_token, looks_like_token, new_token
from dps_console.services.sessions import ActiveSession, Sessions


class ViewTokens:
    """Middleware: a signed-in GET of a resource with ``inline_forms = True`` without its view token
    answers 303 to the same address with a fresh one (keeping the notice the page was to show)."""

    def __init__(self, sessions: Sessions):
        self._sessions = sessions

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: object,
                         params: dict[str, Any]) -> None:
        session: ActiveSession | None = req.context.get("session")
        if req.method != "GET" or session is None or not getattr(resource, "inline_forms", False):
            return
        view = req.get_param("view")
        if looks_like_token(view):
            req.context.view = view
            return
        if session.notice:  # taken by this request, which shows no page
            self._sessions.note(session, session.notice)
        query = "&".join(p for p in req.query_string.split("&") if p and not p.startswith("view="))
        raise falcon.HTTPSeeOther(f"{req.path}?{query + '&' if query else ''}view={new_token()}")


def inline_tokens(key: bytes, session: ActiveSession | None, view: str | None) -> Callable[..., str]:
    """``inline_token(action, fields)`` for ``_forms.html``: the same for the same session, view,
    action and fields. A page without a view token cannot render an inline form (its resource lacks
    ``inline_forms = True``): an error, never a token that Back would not bring again."""

    def token(action: str, fields: dict[str, str] | None = None) -> str:
        if session is None or view is None:
            raise RuntimeError(f"an inline form ({action}) on a page without a view token: give its "
                               "resource inline_forms = True")
        named = sorted(f"{name}={value}" for name, value in (fields or {}).items())
        return derived_token(key, "inline-form", str(session.id), view, action, *named)

    return token
