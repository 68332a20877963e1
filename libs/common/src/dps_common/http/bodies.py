"""Request bodies: bounded reads (413 past 10 MB without reading further; 408 when the client stops
sending, by the server's read deadlines; 400 when the chunked framing is broken) and typed parsing.

The limit holds on every route, those that take no body included: a body with a Content-Length over
10 MB is refused first thing (``dps_common.http.middleware.RequestContext``), and a chunked body, whose
size is known only once read, is read by ``BodyLimit`` before the responder runs, once the key and the
budget are checked; past 10 MB it is 413 and nothing is done. 413, 408 and a malformed body close the
connection (``dps_common.http.problems``): the rest of the body is never read.

Bodies are validated straight from bytes by a pydantic model; unknown fields are dropped (the
spec's rule), malformed JSON and wrong types give 400 naming each offending field. Types are strict
(no ``"12"`` for a number, no ``true`` for 1), but an integer field takes a whole number however it
is written (``12``, ``12.0``, ``1.2e1``): JSON has one number type, and JSON Schema's ``integer`` is
any number whose fraction is zero. ``12.5`` stays a 400 naming the field. A dropped field is
never an error, but it is not silent either: the response names each one in ``Ignored-Fields``
(``IGNORED_FIELDS``), as JSON paths (``discountPercnt, lines[0].discountPercnt``), so a misspelt
field that changed nothing leaves a trace; set by ``BodyLimit.process_response`` from what
``parse_body`` found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar

import falcon
from pydantic import AliasChoices, BaseModel, ValidationError

from dps_common.edge.reading import MalformedBody
from dps_common.errors import BadRequest, PayloadTooLarge, RequestTimeout, UnsupportedMediaType, ValidationFailed
from dps_common.json import loads

MAX_BODY_BYTES = 10 * 1024 * 1024
MALFORMED_BODY = "malformed_body"  # the code of a 400 for a body whose framing is broken (closes the connection)
_READ_CHUNK = 64 * 1024
# the response header naming the request's fields that were dropped (unknown to the operation)
IGNORED_FIELDS = "Ignored-Fields"
MAX_IGNORED_NAMED = 50  # the header names at most this many (the first found, in the body's order)
# its OpenAPI description, on the answers of every operation that takes a body (dps_common.openapi.document)
IGNORED_FIELDS_HEADER: dict[str, object] = {
    "description": "The request's fields that were dropped, unknown to the operation (unknown fields are never "
                   "an error: check this to catch a misspelt one), as JSON paths separated by `, ` "
                   "(`discountPercnt, lines[0].discountPercnt`; a key that is not a plain name as "
                   '`["a key"]`); at most 50. Absent when none was dropped. Also on an error the operation '
                   "answered after reading the body.",
    "schema": {"type": "string"},
    "example": "discountPercnt, lines[0].discountPercnt",
}
_PLAIN_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]{0,99}")
M = TypeVar("M", bound=BaseModel)


def too_large() -> PayloadTooLarge:
    return PayloadTooLarge(f"Request body exceeds the {MAX_BODY_BYTES // (1024 * 1024)} MB limit.")


def read_body(req: falcon.Request) -> bytes:
    """The raw body, at most 10 MB read whether or not a Content-Length was sent. Read once per request
    and kept on its context: a middleware that needs the bytes (``dps_common.http.idempotency``) and the
    responder after it see the same body."""
    cached: bytes | None = req.context.get("raw_body")
    if cached is not None:
        return cached
    length = req.content_length
    if length is not None and length > MAX_BODY_BYTES:
        raise too_large()
    try:
        body = req.bounded_stream.read(length) if length is not None else _read_chunked(req, MAX_BODY_BYTES)
    except TimeoutError:  # the server's body read deadline (dps_common.edge.reading) passed
        raise RequestTimeout("The request body was not received in time.") from None
    except MalformedBody as exc:  # the server could not de-chunk it (dps_common.edge.worker)
        raise BadRequest(f"The request body is malformed: {exc}.", code=MALFORMED_BODY) from None
    req.context.raw_body = body
    return body


def is_chunked(req: falcon.Request) -> bool:
    """A body whose size is not declared: ``Transfer-Encoding`` (chunked) and no Content-Length.
    (Asked on every request: the environ is read directly, ``req.content_length`` raises and catches
    a KeyError when there is none.)"""
    env = req.env
    if "CONTENT_LENGTH" in env and req.content_length is not None:
        return False
    return bool(env.get("HTTP_TRANSFER_ENCODING"))


class BodyLimit:
    """Reads a chunked body before the responder, on every route (a route that takes no body too), so
    past 10 MB the request is 413 before anything is done, and a malformed one 400. Added after the
    auth and rate-limit middleware: a request without a valid key or over its budget is refused
    without its body being read into memory."""

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]
    ) -> None:
        if resource is not None and is_chunked(req):
            read_body(req)  # kept on the request for the responder

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: object, succeeded: bool) -> None:
        ignored: list[str] | None = req.context.get("ignored_fields")
        if ignored:
            resp.set_header(IGNORED_FIELDS, ", ".join(ignored))


def _read_chunked(req: falcon.Request, limit: int) -> bytes:
    """Chunked transfer encoding: the server de-chunks; read until EOF, one chunk past the limit at most."""
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = req.stream.read(min(_READ_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            raise too_large()


def field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "body"


def validation_failed(errors: Sequence[Mapping[str, Any]]) -> ValidationFailed:
    fields = [{"field": field_path(e["loc"]), "message": e["msg"]} for e in errors]
    first = fields[0]
    return ValidationFailed(f"{first['field']}: {first['message']}", extra={"errors": fields})


Location = tuple[int | str, ...]


def _nul_field(value: Any, loc: Location = ()) -> Location | None:
    """The location of the first string holding a NUL character (PostgreSQL text cannot store one)."""
    if isinstance(value, str):
        return loc if "\x00" in value else None
    items: Iterable[tuple[int | str, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _nul_field(item, (*loc, key))
        if found is not None:
            return found
    return None


def parse_body(req: falcon.Request, model: type[M]) -> M:
    """The body as ``model``, validated once per request (a middleware may have validated it first)."""
    parsed = req.context.get("parsed_body")
    if parsed is not None and isinstance(parsed, model):
        return parsed
    value = _parse(req, model)
    req.context.parsed_body = value
    req.context.ignored_fields = ignored_fields(value, loads(req.context.raw_body or b"{}"))
    return value


def ignored_fields(model: BaseModel, body: Any) -> list[str]:
    """The paths of the fields of ``body`` (the JSON ``model`` was validated from) that ``model``
    dropped: unknown to it or to a nested model (a dropped object is named, not its contents)."""
    found: list[str] = []
    _dropped(model, body, "", found)
    return found


def _dropped(value: Any, body: Any, path: str, found: list[str]) -> None:
    """Walks only into objects and arrays: a scalar can hold no dropped field (and a path string per
    scalar would cost more than the validation, on a quote of 500 lines)."""
    if len(found) >= MAX_IGNORED_NAMED:
        return
    if isinstance(value, BaseModel) and isinstance(body, dict):
        names = _input_names(type(value))
        kept = value.model_extra or {}
        for key, item in body.items():
            name = names.get(key)
            if name is None:
                if key not in kept and len(found) < MAX_IGNORED_NAMED:
                    found.append(_member(path, key))
            elif isinstance(item, (dict, list)):
                _dropped(getattr(value, name, None), item, _member(path, key), found)
    elif isinstance(value, (list, tuple)) and isinstance(body, list):
        for index, (item, sent) in enumerate(zip(value, body)):
            if isinstance(sent, (dict, list)):
                _dropped(item, sent, f"{path}[{index}]", found)
    elif isinstance(value, dict) and isinstance(body, dict):
        for key, item in body.items():
            if key in value and isinstance(item, (dict, list)):
                _dropped(value[key], item, _member(path, key), found)


def _member(path: str, key: str) -> str:
    """``path.key``; a key that is not a plain name as ``path["key"]`` (JSON-escaped, ASCII, no comma)."""
    if _PLAIN_NAME.fullmatch(key):
        return f"{path}.{key}" if path else key
    quoted = json.dumps(key[:100]).replace(",", "\\u002c")
    return f"{path}[{quoted}]"


@lru_cache(maxsize=512)
def _input_names(model: type[BaseModel]) -> dict[str, str]:
    """The keys a body may use for ``model``'s fields -> the field's name."""
    config = model.model_config
    by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        aliases: list[str] = []
        if isinstance(info.validation_alias, str):
            aliases.append(info.validation_alias)
        elif isinstance(info.validation_alias, AliasChoices):
            aliases += [c for c in info.validation_alias.choices if isinstance(c, str)]
        elif info.alias:
            aliases.append(info.alias)
        if by_name or not aliases:
            aliases.append(name)
        names.update((alias, name) for alias in aliases)
    return names


def _parse(req: falcon.Request, model: type[M]) -> M:
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType("Requests with a body must be sent as Content-Type: application/json.")
    raw = read_body(req)
    if b"\\u0000" in raw:  # rare: find the field precisely only then
        try:
            loc = _nul_field(loads(raw))
        except ValueError:
            loc = None
        if loc is not None:
            raise validation_failed([{"loc": loc, "msg": "must not contain NUL characters"}])
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        if any(e["type"] == "json_invalid" for e in errors):
            raise ValidationFailed("body: malformed JSON.", code="malformed_json") from None
    whole = whole_numbers_as_integers(raw, errors)  # rare: the slow path only then
    if whole is not None:
        try:
            return model.model_validate_json(whole)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
    raise validation_failed(errors)


def whole_numbers_as_integers(raw: bytes, errors: Sequence[Mapping[str, Any]]) -> bytes | None:
    """``raw`` with each whole number a strict integer field refused (``12.0``, ``1e2``: parsed as
    floats) written as an integer; None when no error is one of those. Only the refused values
    change: a number elsewhere (in free-form JSON, a fraction) is left as it was sent."""
    wanted = [e for e in errors if e["type"] == "int_type" and _whole(e.get("input"))]
    if not wanted:
        return None
    body = json.loads(raw)
    for error in wanted:
        body = _replaced(body, tuple(error["loc"]), error["input"])
    return json.dumps(body).encode()


def _whole(value: object) -> bool:
    return isinstance(value, float) and value.is_integer()


def _replaced(value: Any, loc: Location, number: float) -> Any:
    """``value`` with the float at ``loc`` (its trailing parts may name a union's member, not a key)
    made an int."""
    if isinstance(value, float) and value == number:
        return int(value)
    if not loc:
        return value
    key, rest = loc[0], loc[1:]
    if isinstance(value, dict) and isinstance(key, str) and key in value:
        value[key] = _replaced(value[key], rest, number)
    elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
        value[key] = _replaced(value[key], rest, number)
    return value
