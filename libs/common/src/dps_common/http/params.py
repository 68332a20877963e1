"""Path and query parameters: typed reads with the error a client expects.

A malformed id in a path names nothing that exists, so it is a 404 like any unknown id; a malformed
query parameter, an empty one included (``?status=``), is a 400 naming the parameter.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar
from uuid import UUID

import falcon

from dps_common.errors import NotFound, ValidationFailed, invalid_field

E = TypeVar("E", bound=Enum)


def path_id(raw: str, what: str) -> UUID:
    try:
        return UUID(raw)
    except ValueError:
        raise NotFound(f"{what} not found.") from None


def invalid_param(name: str, message: str) -> ValidationFailed:
    return invalid_field(name, message)


def query_str(req: falcon.Request, name: str, *, max_length: int = 200) -> str | None:
    raw = req.get_param(name)
    if raw is None:
        return None
    if not raw or len(raw) > max_length or "\x00" in raw:
        raise invalid_param(name, f"must be 1 to {max_length} characters, without NUL")
    return raw


def query_uuid(req: falcon.Request, name: str, *, required: bool = False) -> UUID | None:
    raw = req.get_param(name)
    if raw is None:
        if required:
            raise invalid_param(name, "query parameter is required")
        return None
    try:
        return UUID(raw)
    except ValueError:
        raise invalid_param(name, "must be a UUID") from None


def query_enum(req: falcon.Request, name: str, kind: type[E]) -> E | None:
    raw = req.get_param(name)
    if raw is None:
        return None
    try:
        return kind(raw)
    except ValueError:
        raise invalid_param(name, f"must be one of: {', '.join(str(m.value) for m in kind)}") from None


def query_int(req: falcon.Request, name: str, *, minimum: int, maximum: int | None = None) -> int | None:
    raw = req.get_param(name)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) < minimum or (maximum is not None and int(raw) > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise invalid_param(name, f"must be an integer {bound}")
    return int(raw)


def query_bool(req: falcon.Request, name: str) -> bool | None:
    raw = req.get_param(name)
    if raw is None:
        return None
    if raw not in ("true", "false"):
        raise invalid_param(name, "must be true or false")
    return raw == "true"
