"""Answers in Stripe's wire forms, and reading a request's parameters and keys."""

from __future__ import annotations

import json
from typing import Any

import stripe
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Request, Response

from .errors import ApiError, OAuthError, invalid
from .forms import FormTree, parse_form

MAX_BODY = 1024 * 1024
FORM = "application/x-www-form-urlencoded"


class StandInRequest(Request):
    max_content_length = MAX_BODY


class Exchange:
    """What the recording of one request needs beyond the request and the answer."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.form: FormTree | None = None
        self.account: str | None = None


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    response = Response(json.dumps(obj, indent=2) + "\n", status=status, mimetype="application/json")
    response.headers["Stripe-Version"] = stripe.api_version
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def api_error_response(error: ApiError) -> Response:
    return json_response(error.body(), error.status, error.headers)


def oauth_error_response(error: OAuthError) -> Response:
    return json_response(error.body(), error.status)


def html_response(html: str, status: int = 200) -> Response:
    return Response(html, status=status, mimetype="text/html")


def read_params(request: Request, exchange: Exchange) -> FormTree:
    """The parameters: a POST's form-encoded body, a GET's query string."""
    if request.method == "GET":
        tree = parse_form(request.query_string)
    else:
        try:
            body = request.get_data(cache=True)
        except RequestEntityTooLarge:
            raise invalid(f"The request body is larger than {MAX_BODY} bytes.", status=413) from None
        if body and request.mimetype != FORM:
            raise invalid(f"Send parameters form-encoded (Content-Type: {FORM}), not {request.mimetype or 'untyped'}.")
        if request.query_string:
            raise invalid("Parameters of a POST go in its form-encoded body, not in the URL.")
        tree = parse_form(body)
    exchange.form = tree
    return tree


def presented_key(request: Request) -> str | None:
    """The key of `Authorization: Bearer <key>` or of HTTP Basic (the key as user, the password ignored)."""
    auth = request.authorization
    if auth is None:
        return None
    if auth.type == "basic":
        return auth.username or None
    if auth.type == "bearer":
        return auth.token or None
    return None
