"""The public document is what an API key may call. An operation whose required scope no role
grants (``api-keys:manage``: the settings console's own ``/api-keys`` and ``/people``, which answer
403 to every API key) is left out of it, with the schemas and tags only such operations used, so the
reference's Try it out works for every operation it shows and a generated client holds no method
that can only fail. The service's own document (``/internal/v1/openapi.json``) keeps them: the
console's contracts and the scope checks read it."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

_SCHEMA_REF = re.compile(r'"#/components/schemas/([^"]+)"')


def for_api_keys(document: Mapping[str, Any], granted: Iterable[str]) -> dict[str, Any]:
    """``document`` without the operations that need a scope outside ``granted`` (every role's
    scopes), without the paths, schemas and tags that only those operations used; a copy."""
    grantable = set(granted)
    public: dict[str, Any] = copy.deepcopy(dict(document))
    paths: dict[str, Any] = {}
    dropped = 0
    for path, item in public.get("paths", {}).items():
        kept = {method: op for method, op in item.items()
                if not isinstance(op, dict) or set(op.get("x-required-scopes", ())) <= grantable}
        dropped += len(item) - len(kept)
        if any(isinstance(op, dict) for op in kept.values()):
            paths[path] = kept
    if not dropped:
        return public
    public["paths"] = paths
    _keep_used_schemas(public)
    _keep_used_tags(public)
    return public


def _keep_used_schemas(document: dict[str, Any]) -> None:
    schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
    if not schemas:
        return
    rest = {key: value for key, value in document.items() if key != "components"}
    rest["components"] = {key: value for key, value in document["components"].items() if key != "schemas"}
    used: set[str] = set()
    reached = set(_SCHEMA_REF.findall(json.dumps(rest)))
    while reached - used:
        name = (reached - used).pop()
        used.add(name)
        reached |= set(_SCHEMA_REF.findall(json.dumps(schemas.get(name, {}))))
    document["components"]["schemas"] = {name: schema for name, schema in schemas.items() if name in used}


def _keep_used_tags(document: dict[str, Any]) -> None:
    if "tags" not in document:
        return
    used = {tag for item in document["paths"].values() for op in item.values() if isinstance(op, dict)
            for tag in op.get("tags", ())}
    document["tags"] = [tag for tag in document["tags"] if tag.get("name") in used]
