"""A generated document made fit for a generated client (issue 17): what every operation repeats is
one component, referenced (``components/parameters``, ``components/headers``); every enumeration is
one named schema, so a client generator makes one class per enumeration, not one per field; ids say
``format: uuid``; pydantic's automatic titles (``Totalcontractvalue``) are dropped.

Run over a whole document after it is built (``build_document``) and again when parts are added to
it (the event catalogue): each pass only rewrites what is still inline, so a second pass is safe."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

SCHEMA_REF = "#/components/schemas/{name}"
PARAMETER_REF = "#/components/parameters/{name}"
HEADER_REF = "#/components/headers/{name}"

REQUEST_ID = "X-Request-Id"
REQUEST_ID_HEADER = {
    "description": ("The request's id (the client's own `X-Request-Id` when it sent a valid one, 1 to 128 of "
                    "`A-Za-z0-9._:-`), as in the logs and in a problem's `requestId`: quote it when asking for help."),
    "schema": {"type": "string"},
    "example": "5f0c3b9e8a7d4e21b6c0d9f8e7a6b5c4",
}
# Ids that are not ours (the billing platform's, the CRM's) or not UUIDs (a product's spec id).
_NOT_UUID = frozenset({"accountId", "billingQuoteId", "crmId", "priceId", "productSpecId", "specId", "requestId"})
_NOT_UUID_OF = frozenset({("PushedProduct", "productId")})  # the product the push made on the platform
_SUB_SCHEMAS = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")

Visit = Callable[[dict[str, Any], str, str, bool], None]  # schema, owner, property, in an array


def walk_schema(schema: Any, visit: Visit, owner: str, prop: str = "", in_items: bool = False) -> None:
    """Calls ``visit`` on ``schema`` and each schema inside it, children first, with the component it
    belongs to and the property it describes (branches of ``anyOf`` describe the same property)."""
    if not isinstance(schema, dict):
        return
    for name, sub in schema.get("properties", {}).items():
        walk_schema(sub, visit, owner, name)
    for key in _SUB_SCHEMAS:
        walk_schema(schema.get(key), visit, owner, prop, in_items or key == "items")
    for key in _SCHEMA_LISTS:
        for sub in schema.get(key, []):
            walk_schema(sub, visit, owner, prop, in_items)
    visit(schema, owner, prop, in_items)


def _document_schemas(document: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Every schema of the document (components, parameters, bodies, answers) and its owner's name."""
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        yield schema, name
    for item in [*document.get("paths", {}).values(), *document.get("webhooks", {}).values()]:
        for op in item.values():
            for param in op.get("parameters", []):
                if "schema" in param:
                    yield param["schema"], "".join(p.capitalize() for p in param["name"].split("_"))
            contents = [op.get("requestBody", {}).get("content", {})]
            contents += [r.get("content", {}) for r in op.get("responses", {}).values()]
            for content in contents:
                for media in content.values():
                    yield media.get("schema", {}), op.get("operationId", "")


def strip_titles(document: dict[str, Any]) -> None:
    """pydantic titles every field after its name (``totalContractValue`` -> ``Totalcontractvalue``)
    and every model after its class: noise in the reference, and a generator names classes by them."""
    schemas = document.get("components", {}).get("schemas", {})

    def visit(schema: dict[str, Any], owner: str, prop: str, in_items: bool) -> None:
        if isinstance(schema.get("title"), str) and (schema is not schemas.get(owner) or schema["title"] == owner):
            del schema["title"]

    for schema, owner in _document_schemas(document):
        walk_schema(schema, visit, owner)


def mark_uuids(document: dict[str, Any]) -> None:
    """``format: uuid`` on every id of ours: fields named ``id`` or ``...Id``, path parameters ``..._id``."""

    def visit(schema: dict[str, Any], owner: str, prop: str, in_items: bool) -> None:
        ours = prop not in _NOT_UUID and (owner, prop) not in _NOT_UUID_OF
        if (prop == "id" or prop.endswith("Id")) and ours and schema.get("type") == "string":
            if "format" not in schema and "enum" not in schema and "pattern" not in schema:
                schema["format"] = "uuid"

    for schema, owner in _document_schemas(document):
        walk_schema(schema, visit, owner)
    for item in document.get("paths", {}).values():
        for op in item.values():
            for param in op.get("parameters", []):
                if param.get("in") == "path" and param["name"].endswith("_id") and param["schema"] == {"type": "string"}:
                    param["schema"] = {"type": "string", "format": "uuid"}


def _enum_key(schema: dict[str, Any]) -> str | None:
    values = schema.get("enum")
    if not isinstance(values, list) or len(values) < 2:  # a single value is a constant, not a choice
        return None
    return json.dumps([schema.get("type"), sorted(values, key=str)])


def _candidate(owner: str, prop: str, in_items: bool) -> str:
    word = prop[:1].upper() + prop[1:]
    if in_items:  # eventTypes: [EventType]
        return word[:-1] if word.endswith("s") else word
    return owner + word


def name_enums(document: dict[str, Any]) -> None:
    """Every enumeration of two or more values becomes one schema component, referenced wherever it
    is used: an existing component with the same values (a ``StrEnum``'s), else a new one named after
    the shortest of its uses (``WebhookConfig.status`` -> ``WebhookConfigStatus``)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    named = {key: name for name, schema in schemas.items() if (key := _enum_key(schema))}
    inline: dict[str, list[tuple[dict[str, Any], str]]] = {}

    def collect(schema: dict[str, Any], owner: str, prop: str, in_items: bool) -> None:
        key = _enum_key(schema)
        if key is not None and schema is not schemas.get(owner):
            inline.setdefault(key, []).append((schema, _candidate(owner, prop, in_items) if prop else ""))

    for schema, owner in list(_document_schemas(document)):
        walk_schema(schema, collect, owner)
    for key, uses in inline.items():
        name = named.get(key)
        if name is None:
            candidates = sorted({c for _, c in uses if c and c not in schemas}, key=lambda c: (len(c), c))
            if not candidates:
                continue  # only a query parameter uses it, and no schema: left as it is
            name = named[key] = candidates[0]
            first = uses[0][0]
            schemas[name] = {k: first[k] for k in ("type", "enum") if k in first}
        for schema, _ in uses:
            siblings = {k: v for k, v in schema.items() if k not in ("type", "enum", "title")}
            schema.clear()
            schema.update({"$ref": SCHEMA_REF.format(name=name), **siblings})
    document["components"]["schemas"] = dict(sorted(schemas.items()))


def share_parameters_and_headers(document: dict[str, Any], parameters: dict[str, dict[str, Any]],
                                 headers: dict[str, dict[str, Any]]) -> None:
    """Each parameter equal to one of ``parameters`` and each answer header equal to one of ``headers``
    (by name and content) becomes a ``$ref`` to the component, which the document then holds."""
    components = document.setdefault("components", {})
    used_parameters: set[str] = set()
    used_headers: set[str] = set()
    for item in document.get("paths", {}).values():
        for op in item.values():
            for index, param in enumerate(op.get("parameters", [])):
                for name, shared in parameters.items():
                    if param == shared:
                        op["parameters"][index] = {"$ref": PARAMETER_REF.format(name=name)}
                        used_parameters.add(name)
            for response in op.get("responses", {}).values():
                for header, value in response.get("headers", {}).items():
                    if header in headers and value == headers[header]:
                        response["headers"][header] = {"$ref": HEADER_REF.format(name=header)}
                        used_headers.add(header)
    if used_parameters:
        target = components.setdefault("parameters", {})
        target.update({name: parameters[name] for name in sorted(used_parameters)})
    if used_headers:
        target = components.setdefault("headers", {})
        target.update({name: headers[name] for name in sorted(used_headers)})


def paging_parameters(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``limit`` and ``cursor`` parameters the document uses, each under a name of its own."""
    found: dict[str, dict[str, Any]] = {}
    for item in document.get("paths", {}).values():
        for op in item.values():
            for param in op.get("parameters", []):
                if param.get("in") != "query":
                    continue
                if param.get("name") == "cursor":
                    found["Cursor"] = param
                elif param.get("name") == "limit":
                    schema = param["schema"]
                    found[f"Limit{schema['default']}Max{schema['maximum']}"] = param
    return found


def add_request_id(document: dict[str, Any], without: frozenset[int]) -> None:
    """Every answer the app writes carries ``X-Request-Id`` (``dps_common.http.middleware``); those
    the server writes before the app (``without``) do not."""
    for item in document.get("paths", {}).values():
        for op in item.values():
            for status, response in op.get("responses", {}).items():
                if status.isdigit() and int(status) not in without:
                    response.setdefault("headers", {})[REQUEST_ID] = {"$ref": HEADER_REF.format(name=REQUEST_ID)}
    document.setdefault("components", {}).setdefault("headers", {})[REQUEST_ID] = REQUEST_ID_HEADER


def as_in_document(known: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` schemas made as the document's own (``known``) are: no titles, ids as UUIDs, enums
    named, by the names ``known`` already gives them; with any enum component they add."""
    document = {"components": {"schemas": {**copy.deepcopy(known), **copy.deepcopy(new)}}}
    strip_titles(document)
    mark_uuids(document)
    name_enums(document)
    return {name: schema for name, schema in document["components"]["schemas"].items()
            if name in new or name not in known}


def inline_refs(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` with each local ``$ref`` replaced by what it names (its siblings kept):
    one operation, parameter or schema seen whole, as a reader of the reference sees it."""

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
            target: Any = document
            for part in ref[2:].split("/"):
                target = target[part]
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return resolve({**target, **rest}, seen | {ref})
        return {key: resolve(value, seen) for key, value in node.items()}

    whole: dict[str, Any] = resolve(document, frozenset())
    return whole
