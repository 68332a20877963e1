"""The OpenAPI 3.1 document, built from the routes' declared operations (the same record auth uses)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from dps_common.http.bodies import IGNORED_FIELDS, IGNORED_FIELDS_HEADER
from dps_common.http.operations import Operation
from dps_common.openapi.components import (
    add_request_id,
    mark_uuids,
    name_enums,
    paging_parameters,
    share_parameters_and_headers,
    strip_titles,
)
from dps_common.openapi.intro import introduction
from dps_common.openapi.secrets import add_replayed_schemas, document_secret_replay

_REF = "#/components/schemas/{model}"
_STANDARD_ERRORS = {
    400: "Invalid request: malformed JSON, a field of the wrong type, a bad `limit` or a foreign cursor.",
    401: "Missing, unknown, revoked or malformed API key. Do not retry with the same key.",
    403: "The key's role lacks the required scope, or the key's user may not act on this object.",
    404: "No such object in the key's organization.",
    409: "The object's current state does not allow the operation.",
    408: "The request's head or body was not received in time (the server's read deadlines); the "
         "connection is closed.",
    413: "Request body larger than 10 MB, on any operation (those that take no body included): refused "
         "before anything is done, and the connection closed.",
    414: "The request line (method, path and query) is longer than the server accepts (4094 bytes). "
         "Answered by the server before the operation, without the RateLimit fields; the connection is closed.",
    415: "A request body was sent without Content-Type: application/json.",
    431: "A request header is longer than the server accepts (8190 bytes), or there are more than 100 "
         "headers. Answered by the server before the operation, without the RateLimit fields; the "
         "connection is closed.",
    429: "The request budget is spent (the organization's, or without a valid key the client address's): "
         "nothing was done. Retry after the seconds in `Retry-After`.",
}
# The budget every answer reports (dps_common.http.rate_limit; draft-ietf-httpapi-ratelimit-headers).
_RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {
        "description": "The quota policy this request spent, as a structured-field list: its name, `q` the "
                       "requests allowed per window of `w` seconds. `\"organization\"` with a valid API key "
                       "(one budget for the organization across the API), `\"anonymous\"` otherwise (per "
                       "client address); `\"documentation\"` for the reference page and the OpenAPI document "
                       "(per client address, apart from the anonymous budget).",
        "schema": {"type": "string"},
        "example": '"organization";q=100;w=1',
    },
    "RateLimit": {
        "description": "The budget left: `r` requests remain under the named policy, within the next `t` seconds "
                       "(on a 429, `t` equals `Retry-After`).",
        "schema": {"type": "string"},
        "example": '"organization";r=57;t=1',
    },
}
_RETRY_AFTER = {
    "description": "Seconds to wait before retrying.",
    "schema": {"type": "integer", "minimum": 1},
    "example": 1,
}
_HEADER_REF = "#/components/headers/{name}"
_PROBLEM = {
    "type": "object",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string", "description": "Stable, machine-readable error code."},
        "requestId": {"type": ["string", "null"]},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "requiredScope": {"type": "string"},
    },
}


# What the server itself may answer to any request, before the operation runs (dps_common.edge, and
# dps_common.http.bodies for a chunked body): a slow request, an oversized body, request line or header.
_SERVER_ERRORS = frozenset({408, 413, 414, 431})
# answered by the server without the app: no budget was spent, so no RateLimit fields
_WITHOUT_RATE_LIMIT = frozenset({414, 431})


def _error_codes(method: str, op: Operation, path: str) -> list[int]:
    codes = {400, 401, 429} | set(op.errors) | _SERVER_ERRORS
    if op.scope is not None:
        codes.add(403)
    if "{" in path:
        codes.add(404)
    if op.body is not None:
        codes.add(415)
    return sorted(codes)


def _parameters(path: str, op: Operation) -> list[dict[str, Any]]:
    params = [
        {"name": seg[1:-1], "in": "path", "required": True, "schema": {"type": "string"}}
        for seg in path.split("/")
        if seg.startswith("{") and seg.endswith("}")
    ]
    if op.paging:
        params.append(
            {
                "name": "limit",
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": op.paging.maximum, "default": op.paging.default},
            }
        )
        params.append({"name": "cursor", "in": "query", "schema": {"type": "string"}})
    for q in op.query:
        param = {"name": q.name, "in": "query", "required": q.required, "schema": q.schema}
        if q.description:
            param["description"] = q.description
        if q.deprecated:
            param["deprecated"] = True
        params.append(param)
    return params


def _operation(method: str, path: str, op: Operation) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "summary": op.summary,
        "operationId": op.operation_id or f"{method.lower()}{path.replace('/', '_').replace('{', '').replace('}', '')}",
        "parameters": _parameters(path, op),
        "security": [{"apiKey": []}],
        "x-required-scopes": [str(op.scope)] if op.scope else [],
        "responses": {},
    }
    if op.tag:
        doc["tags"] = [op.tag]
    if op.description:
        doc["description"] = op.description
    if op.extra_scopes:
        doc["x-optional-scopes"] = [str(s) for s in op.extra_scopes]
    if op.body is not None:
        doc["requestBody"] = {
            "required": op.body_required,
            "content": {"application/json": {"schema": {"$ref": _REF.format(model=op.body.__name__)}}},
        }
    ok: dict[str, Any] = {"description": "Success.", "headers": _rate_limit_headers(op.status)}
    if op.body is not None:  # the fields of the body that were dropped (dps_common.http.bodies)
        ok["headers"][IGNORED_FIELDS] = IGNORED_FIELDS_HEADER
    if op.response is not None:
        ok["content"] = {"application/json": {"schema": {"$ref": _REF.format(model=op.response.__name__)}}}
    doc["responses"][str(op.status)] = ok
    for code in _error_codes(method, op, path):
        response: dict[str, Any] = {"description": _STANDARD_ERRORS.get(code, "Error.")}
        if code not in _WITHOUT_RATE_LIMIT:
            response["headers"] = _rate_limit_headers(code)
        response["content"] = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
        doc["responses"][str(code)] = response
    return doc


_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": (
        "Makes a retry safe: the first request with a key runs, and its answer is kept for 24 hours "
        "per API key and replayed (with `Idempotent-Replayed: true`) to any retry with the same "
        "key, method, path and body (JSON compared by content); another API key's request with the "
        "same key is a request of its own. A secret in the answer is shown once: a replay carries it "
        "as null, with `secretShownOnce`. 1 to 255 printable ASCII characters, "
        "e.g. a UUID. Answers refused before the operation runs (401, 403, 429, 400 for the key or the "
        "body's schema, 413, 415), conflicts (409) and server errors (5xx) are not kept: a retry runs "
        "again. Every other answer is kept, errors of the operation's own rules included."
    ),
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]([ -~]*[!-~])?$"},
}
_REPLAYED = {
    "description": "`true` when this answer is the one kept for the request's Idempotency-Key (a replay).",
    "schema": {"type": "string", "enum": ["true"]},
}
_KEY_IN_USE = "A request with the same Idempotency-Key is still being processed; retry once it completes."
_KEY_REUSED = "The Idempotency-Key was used in the last 24 hours with another method, path or body."


def _document_idempotency(doc: dict[str, Any]) -> None:
    """A keyed POST: the ``Idempotency-Key`` header, the replay marker, and its 409 and 422."""
    doc["parameters"].append(_IDEMPOTENCY_KEY)
    for code, response in doc["responses"].items():
        if code.startswith(("2", "4")) and code not in ("401", "403", "408", "409", "413", "414", "415", "429", "431"):
            response.setdefault("headers", {})["Idempotent-Replayed"] = _REPLAYED
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    conflict = doc["responses"].get("409")
    if conflict is None:
        doc["responses"]["409"] = {"description": _KEY_IN_USE, "headers": _rate_limit_headers(409), "content": problem}
    else:
        conflict["description"] += " Or: " + _KEY_IN_USE[0].lower() + _KEY_IN_USE[1:]
    doc["responses"]["422"] = {"description": _KEY_REUSED, "headers": _rate_limit_headers(422), "content": problem}
    doc["responses"] = dict(sorted(doc["responses"].items()))


_KEY_CHECK_UNAVAILABLE = (
    "API keys cannot be checked right now (`key_check_unavailable`: this service asks the api, which is "
    "unreachable); nothing was done. Retry shortly."
)


def document_key_check_unavailable(document: dict[str, Any]) -> None:
    """A service that checks keys by asking the api (``dps_common.auth.introspection``) answers 503 to
    any keyed request while the api is unreachable: every keyed operation says so."""
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for item in document["paths"].values():
        for op in item.values():
            if op.get("security"):
                op["responses"]["503"] = {
                    "description": _KEY_CHECK_UNAVAILABLE, "headers": _rate_limit_headers(503), "content": problem,
                }
                op["responses"] = dict(sorted(op["responses"].items()))


def _rate_limit_headers(status: int) -> dict[str, Any]:
    names = [*_RATE_LIMIT_HEADERS, "Retry-After"] if status == 429 else list(_RATE_LIMIT_HEADERS)
    return {name: {"$ref": _HEADER_REF.format(name=name)} for name in names}


def build_document(title: str, version: str, server_url: str, routes: list[tuple[str, object]]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    models: set[type[BaseModel]] = set()
    for path, resource in routes:
        for method, op in getattr(resource, "operations", {}).items():
            paths.setdefault(path, {})[method.lower()] = _operation(method, path, op)
            if method == "POST" and not getattr(resource, "public", False):
                _document_idempotency(paths[path]["post"])
                document_secret_replay(paths[path]["post"], op)
            models.update(m for m in (op.body, op.response) if m is not None)
    _, defs = models_json_schema(
        [(m, "validation" if _is_request(m, routes) else "serialization") for m in sorted(models, key=lambda m: m.__name__)],
        ref_template=_REF,
    )
    schemas = dict(defs.get("$defs", {}))
    schemas["Problem"] = _PROBLEM
    add_replayed_schemas(schemas, [op for _, r in routes for op in getattr(r, "operations", {}).values()])
    document = {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "servers": [{"url": server_url}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}},
            "headers": {**_RATE_LIMIT_HEADERS, "Retry-After": _RETRY_AFTER},
        },
    }
    _for_generated_clients(document)
    return document


def _is_request(model: type[BaseModel], routes: Sequence[tuple[str, object]]) -> bool:
    return any(op.body is model for _, r in routes for op in getattr(r, "operations", {}).values())


def _for_generated_clients(document: dict[str, Any]) -> None:
    """The introduction; shared parameters and headers as components; enums named; ids as UUIDs;
    no automatic titles (``dps_common.openapi.components``)."""
    document["info"]["description"] = introduction()
    add_request_id(document, _WITHOUT_RATE_LIMIT)
    parameters = {"Idempotency-Key": _IDEMPOTENCY_KEY, **paging_parameters(document)}
    share_parameters_and_headers(document, parameters, {"Idempotent-Replayed": _REPLAYED, IGNORED_FIELDS: IGNORED_FIELDS_HEADER})
    strip_titles(document)
    mark_uuids(document)
    name_enums(document)
