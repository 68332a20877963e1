"""OAuth of a Stripe App: the marketplace's install page, the token exchange, deauthorization; and the
stand-in's own pages (quote review, control page)."""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlsplit, urlunsplit

from werkzeug.wrappers import Request, Response

from . import pages
from .errors import ApiError, OAuthError
from .oauth import redact
from .params import Params
from .state import State
from .wire import Exchange, html_response, json_response, presented_key, read_params

_ACCOUNT = re.compile(r"acct_[A-Za-z0-9]{1,64}")


class PageError(Exception):
    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail

    def response(self) -> Response:
        return html_response(pages.error_page(self.title, self.detail), self.status)


def authorize(state: State, request: Request, exchange: Exchange) -> Response:
    """GET: the install page. POST: the Install or Cancel button, redirecting to the app's redirect_uri.
    A bad client_id or redirect_uri gets an error page, never a redirect."""
    try:
        values = read_params(request, exchange)
    except ApiError as exc:
        raise PageError(400, "Invalid request", exc.message) from None
    params = {k: v for k, v in values.items() if isinstance(v, str)}
    client_id = params.get("client_id", "")
    if client_id != state.config.client_id:
        raise PageError(400, "Unknown application", f"No application with client_id {client_id!r}.")
    registered = state.config.redirect_uris
    # Without redirect_uri, the first one the app registered.
    redirect_uri = params.get("redirect_uri") or (registered[0] if registered else "")
    if redirect_uri not in registered:
        raise PageError(
            400, "Invalid redirect_uri", f"{redirect_uri!r} is not a redirect URI registered for {client_id}."
        )
    oauth_state = params.get("state")
    if request.method == "GET":
        return html_response(
            pages.authorize_page(request.path, state.config.app_name, client_id, redirect_uri, oauth_state)
        )
    decision = params.get("decision")
    extra = {"state": oauth_state} if oauth_state is not None else {}
    if decision == "cancel":
        query = {"error": "access_denied", "error_description": "The user denied your request", **extra}
        return _redirect(redirect_uri, query)
    if decision != "install":
        raise PageError(400, "Invalid request", "Choose Install or Cancel.")
    chosen = params.get("account") or None
    if chosen is not None and _ACCOUNT.fullmatch(chosen) is None:
        raise PageError(400, "Invalid account", f"{chosen!r} is not an account id (acct_...).")
    account, code = state.install(chosen)
    exchange.account = account
    return _redirect(redirect_uri, {"code": code, **extra})


def _redirect(uri: str, query: dict[str, str]) -> Response:
    parts = urlsplit(uri)
    joined = "&".join(q for q in (parts.query, urlencode(query)) if q)
    return Response(status=303, headers={"Location": urlunsplit(parts._replace(query=joined))})


def _check_app_key(state: State, request: Request) -> None:
    key = presented_key(request)
    if key is None:
        raise OAuthError(
            "invalid_request",
            "No API key provided. Authenticate with the app's secret key: HTTP Basic with the key as the user and "
            "an empty password, or Bearer.",
            401,
        )
    if key != state.config.secret_key:
        raise OAuthError("invalid_client", f"Invalid API Key provided: {redact(key)}", 401)


def _oauth_params(request: Request, exchange: Exchange, allowed: set[str]) -> dict[str, str | None]:
    try:
        params = Params(read_params(request, exchange))
        params.reject_unknown(allowed)
        return {name: params.string(name) for name in allowed}
    except ApiError as exc:
        raise OAuthError("invalid_request", exc.message) from None


def token(state: State, request: Request, exchange: Exchange) -> Response:
    _check_app_key(state, request)
    params = _oauth_params(request, exchange, {"grant_type", "code", "refresh_token"})
    grant_type = params["grant_type"]
    if grant_type is None:
        raise OAuthError("invalid_request", "No grant type specified")
    if grant_type == "authorization_code":
        code = params["code"]
        if code is None:
            raise OAuthError("invalid_request", "No authorization code provided")
        answer = state.grants.exchange_code(code)
    elif grant_type == "refresh_token":
        refresh_token = params["refresh_token"]
        if refresh_token is None:
            raise OAuthError("invalid_request", "No refresh token provided")
        answer = state.grants.refresh(refresh_token)
    else:
        raise OAuthError("unsupported_grant_type", f"Unsupported grant type: {grant_type}")
    exchange.account = answer["stripe_user_id"]
    return json_response(answer)


def deauthorize(state: State, request: Request, exchange: Exchange) -> Response:
    _check_app_key(state, request)
    params = _oauth_params(request, exchange, {"client_id", "stripe_user_id"})
    client_id, account = params["client_id"], params["stripe_user_id"]
    if client_id is None:
        raise OAuthError("invalid_request", "No client_id provided")
    if account is None:
        raise OAuthError("invalid_request", "No stripe_user_id provided")
    exchange.account = account
    if client_id != state.config.client_id:
        raise OAuthError("invalid_client", f"No such application: '{client_id}'")
    if not state.uninstall(account):
        raise OAuthError(
            "invalid_client",
            f"Application {client_id} is not connected to stripe account {account}, or that account does not exist.",
        )
    return json_response({"stripe_user_id": account})


def review(state: State, quote_id: str) -> Response:
    found = state.store.find("quote", quote_id)
    if found is None:
        raise PageError(404, "No such quote", f"There is no quote {quote_id}.")
    account, quote = found
    return html_response(pages.review_page(account, quote, state.store.line_items(quote_id)))


def control(state: State, urls: dict[str, str]) -> Response:
    quotes = [found for q in state.store.all("quote") if (found := state.store.find("quote", q["id"])) is not None]
    return html_response(
        pages.control_page(urls, state.grants.installed(), quotes, state.webhooks.deliveries())
    )


def uninstall(state: State, account: str) -> Response:
    if not state.uninstall(account):
        raise PageError(404, "Not installed", f"The app is not installed in {account}.")
    return Response(status=303, headers={"Location": "/"})
