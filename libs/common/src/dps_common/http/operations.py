"""Each resource declares its operations once; auth enforces and OpenAPI documents the same record.

A resource class sets ``operations = {"GET": Operation(...), ...}``. The auth middleware reads the
required scope from it, the OpenAPI builder reads everything, so the document cannot drift from what
the server enforces. Resources with ``public = True`` need no key (health, the OpenAPI document).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from dps_common.auth.scopes import Scope


@dataclass(frozen=True)
class QueryParam:
    name: str
    schema: dict[str, Any]
    description: str = ""
    required: bool = False
    deprecated: bool = False


@dataclass(frozen=True)
class Paging:
    """A cursor-paged list: ``limit`` in ``1..maximum`` (default ``default``) and ``cursor``."""

    default: int
    maximum: int
    items_property: str


@dataclass(frozen=True)
class Operation:
    summary: str
    scope: Scope | None  # None: any valid key (``/whoami``)
    response: type[BaseModel] | None = None
    status: int = 200
    body: type[BaseModel] | None = None
    body_required: bool = True  # False: the body may be left out entirely
    paging: Paging | None = None
    query: tuple[QueryParam, ...] = ()
    errors: tuple[int, ...] = ()  # beyond the 400/401/403/413 every keyed operation may return
    tag: str = ""
    description: str = ""
    extra_scopes: tuple[Scope, ...] = field(default=())  # scopes that widen the answer, documented only
    operation_id: str = ""
    # Top-level fields of the answer that carry a secret, shown once: an answer kept for an
    # Idempotency-Key holds them as null, with a notice (``dps_common.idempotency.redaction``).
    secret_fields: tuple[str, ...] = ()
    secret_renewal: str = ""  # how to get a new secret, e.g. "POST /things/{id}/rotate" ({id}: the answer's)
