"""The API endpoints (`/v1/products`, `/v1/prices`, `/v1/quotes`) and who calls them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.wrappers import Request, Response

from .catalog import Caller, create_price, create_product
from .errors import ApiError, invalid
from .forms import FormTree
from .oauth import redact
from .params import Params
from .quotes import create_quote, expansions, with_line_items
from .state import State
from .store import ObjectStore, list_page
from .wire import json_response, presented_key

_NO_KEY = (
    "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer "
    "auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for "
    "details, or we can help at https://support.stripe.com/."
)
PATHS = {"product": "/v1/products", "price": "/v1/prices", "quote": "/v1/quotes"}
# Filters each list accepts beside limit / starting_after / ending_before.
_LIST_FILTERS: dict[str, dict[str, Callable[[Params], Any]]] = {
    "product": {"active": lambda p: p.boolean("active")},
    "price": {
        "active": lambda p: p.boolean("active"),
        "product": lambda p: p.string("product"),
        "currency": lambda p: p.string("currency"),
        "type": lambda p: p.choice("type", ("one_time", "recurring")),
    },
    "quote": {"status": lambda p: p.choice("status", ("accepted", "canceled", "draft", "open"))},
}


def _create_quote(params: Params, caller: Caller, store: ObjectStore) -> dict[str, Any]:
    return create_quote(params, caller, store)[0]


_CREATE: dict[str, Callable[[Params, Caller, ObjectStore], dict[str, Any]]] = {
    "product": create_product,
    "price": create_price,
    "quote": _create_quote,
}


def caller_for(state: State, request: Request) -> Caller:
    """The connected account of the access token (or, with the app's secret key, the app's own account)."""
    config = state.config
    key = presented_key(request)
    if key is None:
        raise ApiError(401, _NO_KEY)
    if key == config.secret_key:
        account, application = config.platform_account, None
    else:
        found = state.grants.account_for(key)
        if found is None:
            raise ApiError(401, f"Invalid API Key provided: {redact(key)}")
        account, application = found, config.client_id
    header = request.headers.get("Stripe-Account")
    if header and header != account:
        if key != config.secret_key or not state.grants.is_installed(header):
            raise ApiError(
                403,
                f"The provided key '{redact(key)}' does not have access to account '{header}' (or that account does "
                "not exist). Application access may have been revoked.",
                code="account_invalid",
            )
        account, application = header, config.client_id
    return Caller(account=account, livemode=config.livemode, application=application)


def create(state: State, kind: str, form: FormTree, caller: Caller) -> Response:
    return json_response(_CREATE[kind](Params(form), caller, state.store))


def retrieve(state: State, kind: str, object_id: str, form: FormTree, caller: Caller) -> Response:
    params = Params(form)
    params.reject_unknown({"expand"})
    expand = expansions(params) if kind == "quote" else params.strings("expand")
    if expand and kind != "quote":
        raise invalid(f"This property cannot be expanded ({expand[0]}).", param="expand[0]")
    obj = state.store.get(caller.account, kind, object_id)
    if obj is None:
        raise ApiError(404, f"No such {kind}: '{object_id}'", code="resource_missing", param="id")
    if "line_items" in expand:
        obj = with_line_items(obj, state.store.line_items(object_id))
    return json_response(obj)


def list_objects(state: State, kind: str, form: FormTree, caller: Caller) -> Response:
    params = Params(form)
    filters = _LIST_FILTERS[kind]
    params.reject_unknown({"limit", "starting_after", "ending_before", *filters})
    wanted = {name: read(params) for name, read in filters.items()}
    objects = [
        obj
        for obj in reversed(state.store.all(kind, caller.account))
        if all(value is None or obj[name] == value for name, value in wanted.items())
    ]
    return json_response(list_page(params, objects, kind, PATHS[kind]))


def quote_line_items(state: State, quote_id: str, form: FormTree, caller: Caller) -> Response:
    params = Params(form)
    params.reject_unknown({"limit", "starting_after", "ending_before"})
    if state.store.get(caller.account, "quote", quote_id) is None:
        raise ApiError(404, f"No such quote: '{quote_id}'", code="resource_missing", param="quote")
    items = state.store.line_items(quote_id)
    return json_response(list_page(params, items, "line item", f"/v1/quotes/{quote_id}/line_items"))
