"""The WSGI application: routing, then for each call faults, authentication, parameters, idempotency,
the endpoint, and a recording of it all."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from . import api, marketplace
from .errors import ApiError, OAuthError
from .forms import with_arrays
from .idempotency import StoredAnswer
from .ids import new_id
from .recording import RecordedRequest
from .state import State
from .wire import Exchange, StandInRequest, api_error_response, oauth_error_response, presented_key, read_params

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

MARKETPLACE_PREFIX = "/marketplace"
_KINDS = {"products": "product", "prices": "price", "quotes": "quote"}

_URLS = Map(
    [
        Rule("/v1/<any(products, prices, quotes):kind>", methods=["GET"], endpoint="list"),
        Rule("/v1/<any(products, prices, quotes):kind>", methods=["POST"], endpoint="create"),
        Rule("/v1/<any(products, prices, quotes):kind>/<object_id>", methods=["GET"], endpoint="retrieve"),
        Rule("/v1/quotes/<quote_id>/line_items", methods=["GET"], endpoint="line_items"),
        Rule("/v1/oauth/token", methods=["POST"], endpoint="token"),
        Rule("/v1/oauth/deauthorize", methods=["POST"], endpoint="deauthorize"),
        Rule(f"{MARKETPLACE_PREFIX}/oauth/v2/authorize", methods=["GET", "POST"], endpoint="authorize"),
        Rule("/quotes/<quote_id>", methods=["GET"], endpoint="review"),
        Rule("/test/quotes/<quote_id>", methods=["GET"], endpoint="review"),  # Stripe's test-mode dashboard path
        Rule("/accounts/<account>/uninstall", methods=["POST"], endpoint="uninstall"),
        Rule("/", methods=["GET"], endpoint="control"),
    ],
    strict_slashes=False,
)


class _Dropped(Exception):
    """A fault closes the connection without an answer."""


class StandInApp:
    def __init__(self, state: State, urls: Callable[[], dict[str, str]]) -> None:
        self.state = state
        self._urls = urls

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = StandInRequest(environ)
        request_id = new_id("req")
        started = time.time()
        exchange = Exchange(request_id)
        try:
            response = self._answer(request, exchange)
        except _Dropped:
            self._record(request, exchange, None, request_id, started)
            sock = environ.get("werkzeug.socket")
            if isinstance(sock, socket.socket):
                sock.shutdown(socket.SHUT_RDWR)
            # Werkzeug's server takes this as the client going away and writes nothing.
            raise ConnectionAbortedError("dropped by a fault") from None
        response.headers["Request-Id"] = request_id
        self._record(request, exchange, response, request_id, started)
        return response(environ, start_response)

    def _answer(self, request: Request, exchange: Exchange) -> Response:
        try:
            endpoint, args = _URLS.bind_to_environ(request.environ).match()
        except (NotFound, MethodNotAllowed) as exc:
            if request.path.startswith("/v1/"):
                return api_error_response(
                    ApiError(
                        404,
                        f"Unrecognized request URL ({request.method}: {request.path}). Please see "
                        "https://stripe.com/docs or we can help at https://support.stripe.com/.",
                    )
                )
            return exc.get_response()
        except HTTPException as exc:
            return exc.get_response()
        try:
            # Rate limits and other unstored faults come before anything is checked.
            limit = self.state.faults.over_rate(request.method, request.path, _rate_account(self.state, request),
                                                time.monotonic())
            if limit is not None:
                return api_error_response(limit.error())
            fault = self.state.faults.take("status", request.method, request.path, stored=False)
            if fault is not None:
                return api_error_response(fault.error())
            return self._endpoint(request, exchange, endpoint, args)
        except ApiError as exc:
            return api_error_response(exc)
        except OAuthError as exc:
            return oauth_error_response(exc)
        except marketplace.PageError as exc:
            return exc.response()

    def _endpoint(self, request: Request, exchange: Exchange, endpoint: str, args: Mapping[str, Any]) -> Response:
        state = self.state
        if endpoint in ("list", "create", "retrieve", "line_items"):
            caller = api.caller_for(state, request)
            exchange.account = caller.account
            form = read_params(request, exchange)
            if endpoint == "create":
                kind = _KINDS[args["kind"]]
                # Stripe scopes idempotency keys to the account and key that sent them.
                scope = f"{caller.account}:{presented_key(request)}"
                return self._run(request, exchange, scope, lambda: api.create(state, kind, form, caller))
            if endpoint == "list":
                kind = _KINDS[args["kind"]]
                return self._run(request, exchange, None, lambda: api.list_objects(state, kind, form, caller))
            if endpoint == "retrieve":
                kind, object_id = _KINDS[args["kind"]], args["object_id"]
                return self._run(request, exchange, None, lambda: api.retrieve(state, kind, object_id, form, caller))
            quote_id = args["quote_id"]
            return self._run(request, exchange, None, lambda: api.quote_line_items(state, quote_id, form, caller))
        pages: dict[str, Callable[[], Response]] = {
            "token": lambda: marketplace.token(state, request, exchange),
            "deauthorize": lambda: marketplace.deauthorize(state, request, exchange),
            "authorize": lambda: marketplace.authorize(state, request, exchange),
            "review": lambda: marketplace.review(state, args["quote_id"]),
            "uninstall": lambda: marketplace.uninstall(state, args["account"]),
            "control": lambda: marketplace.control(state, self._urls()),
        }
        return self._run(request, exchange, None, pages[endpoint])

    def _run(
        self, request: Request, exchange: Exchange, scope: str | None, operation: Callable[[], Response]
    ) -> Response:
        """Runs the endpoint under its idempotency key (POSTs of the API), with latency, holds, drops and
        stored failures around it."""
        faults = self.state.faults
        method, path = request.method, request.path
        key = request.headers.get("Idempotency-Key") if scope is not None and method == "POST" else None
        if scope is not None and key is not None:
            replay = self.state.idempotency.begin(scope, key, f"{method} {path}", exchange.form)
            if replay is not None:
                return _replayed(replay, key)
        stored: StoredAnswer | None = None
        try:
            latency = faults.take("latency", method, path)
            if latency is not None:
                time.sleep(latency.seconds)
            hold = faults.take("hold", method, path)
            if hold is not None:
                faults.held_until_released(hold)
            if faults.take("drop", method, path, after_processing=False) is not None:
                raise _Dropped()
            failure = faults.take("status", method, path, stored=True)
            try:
                response = api_error_response(failure.error()) if failure is not None else operation()
            except ApiError as exc:
                response = api_error_response(exc)
            if key is not None:
                response.headers["Idempotency-Key"] = key
                # Stripe keeps what the endpoint answered, even a 500; not what failed validation.
                if not 400 <= response.status_code < 500:
                    stored = StoredAnswer(
                        status=response.status_code,
                        body=response.get_data(),
                        headers=tuple((k, v) for k, v in response.headers.items() if k != "Content-Length"),
                        request_id=exchange.request_id,
                    )
        finally:
            if scope is not None and key is not None:
                self.state.idempotency.finish(scope, key, stored)
        if faults.take("drop", method, path, after_processing=True) is not None:
            raise _Dropped()
        return response

    def _record(
        self, request: Request, exchange: Exchange, response: Response | None, request_id: str, started: float
    ) -> None:
        body: Any = None
        if response is not None:
            text = response.get_data(as_text=True)
            try:
                body = json.loads(text) if response.mimetype == "application/json" else text
            except ValueError:
                body = text
        self.state.recorder.add(
            RecordedRequest(
                method=request.method,
                path=request.path,
                query=request.query_string.decode("latin-1"),
                headers=dict(request.headers.items()),
                raw_body=_body(request),
                form=with_arrays(exchange.form) if exchange.form is not None else None,
                status=response.status_code if response is not None else None,
                response=body,
                response_headers=dict(response.headers.items()) if response is not None else {},
                request_id=request_id,
                at=started,
                duration=time.time() - started,
                account=exchange.account,
            )
        )


def _rate_account(state: State, request: Request) -> str:
    """Whose rate a call counts against: the account it acts on (`Stripe-Account`, the access token's
    account, the app's own account for its secret key), or the unknown key itself."""
    named = request.headers.get("Stripe-Account")
    if named:
        return named
    key = presented_key(request) or ""
    if key == state.config.secret_key:
        return state.config.platform_account
    try:
        return state.grants.account_for(key) or key
    except ApiError:  # an expired token: its own 401 comes later, if the call is admitted
        return key


def _body(request: Request) -> bytes:
    try:
        return request.get_data(cache=True)
    except HTTPException:  # too large to keep
        return b""


def _replayed(answer: StoredAnswer, key: str) -> Response:
    response = Response(answer.body, status=answer.status)
    response.headers.clear()
    for name, value in answer.headers:
        response.headers[name] = value
    response.headers["Idempotent-Replayed"] = "true"
    response.headers["Original-Request"] = answer.request_id
    response.headers["Idempotency-Key"] = key
    return response
