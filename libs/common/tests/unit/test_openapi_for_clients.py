"""The shared OpenAPI generation gives a generated client what it needs (issue 17): one component per
shared parameter and header, referenced; one named schema per enumeration; ids as UUIDs; no automatic
titles; an introduction that lists every error ``code`` the services answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from dps_common.auth.scopes import Scope
from dps_common.events.catalogue import EventCatalogue, EventType
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.openapi.components import inline_refs
from dps_common.openapi.document import build_document
from dps_common.openapi.events import add_event_catalogue
from dps_common.openapi.intro import ERROR_CODES

Status = Literal["ACTIVE", "PAUSED", "DISABLED"]


class Widget(BaseModel):
    id: str
    ownerUserId: str | None
    crmId: str | None = Field(default=None, description="The CRM's own id: not ours, not a UUID.")
    status: Status
    totalContractValue: str


class WidgetList(BaseModel):
    widgets: list[Widget]
    nextCursor: str | None


class WidgetCreate(BaseModel):
    name: str
    status: Status = "ACTIVE"
    tags: list[Literal["red", "green"]] = []


class WidgetChanged(BaseModel):  # an event's data: the same enumeration, added after the operations
    id: str
    status: Status


class Widgets:
    operations = {
        "GET": Operation(summary="List.", scope=None, response=WidgetList,
                         paging=Paging(default=100, maximum=500, items_property="widgets"),
                         query=(QueryParam("status", {"type": "string", "enum": ["ACTIVE", "PAUSED", "DISABLED"]}),)),
        "POST": Operation(summary="Make.", scope=Scope.QUOTES_WRITE, body=WidgetCreate, response=Widget, status=201),
    }


class OneWidget:
    operations = {"GET": Operation(summary="One.", scope=None, response=Widget)}


class Gadgets:
    operations = {
        "GET": Operation(summary="List.", scope=None, response=WidgetList,
                         paging=Paging(default=100, maximum=500, items_property="widgets")),
        "POST": Operation(summary="Make.", scope=Scope.QUOTES_WRITE, body=WidgetCreate, response=Widget, status=201),
    }


def document() -> dict[str, Any]:
    doc = build_document("Test", "1", "/external/v1",
                         [("/widgets", Widgets()), ("/widgets/{widget_id}", OneWidget()), ("/gadgets", Gadgets())])
    add_event_catalogue(doc, EventCatalogue([EventType("widget.changed", "A widget changed.", WidgetChanged)]))
    return doc


def _all_enums(node: Any) -> list[list[Any]]:
    if isinstance(node, dict):
        found = [node["enum"]] if isinstance(node.get("enum"), list) and len(node["enum"]) > 1 else []
        return found + [e for value in node.values() for e in _all_enums(value)]
    if isinstance(node, list):
        return [e for value in node for e in _all_enums(value)]
    return []


def test_every_enumeration_is_one_named_component_referenced_wherever_it_is_used():
    doc = document()
    schemas = doc["components"]["schemas"]
    assert schemas["WidgetStatus"] == {"type": "string", "enum": ["ACTIVE", "PAUSED", "DISABLED"]}
    assert schemas["Tag"] == {"type": "string", "enum": ["red", "green"]}  # tags: [Tag]
    outside = {name: schema for name, schema in schemas.items() if name not in ("WidgetStatus", "Tag")}
    assert _all_enums(outside) == [] and _all_enums(doc["paths"]) == []
    ref = {"$ref": "#/components/schemas/WidgetStatus"}
    assert schemas["Widget"]["properties"]["status"] == ref
    assert schemas["WidgetChanged"]["properties"]["status"] == ref  # the event's data, added later
    assert schemas["WidgetCreate"]["properties"]["status"] == {**ref, "default": "ACTIVE"}
    [status] = [p for p in doc["paths"]["/widgets"]["get"]["parameters"] if p.get("name") == "status"]
    assert status["schema"] == ref


def test_shared_parameters_and_headers_are_components_referenced_by_every_operation():
    doc = document()
    components = doc["components"]
    for path in ("/widgets", "/gadgets"):
        get, post = doc["paths"][path]["get"], doc["paths"][path]["post"]
        assert {"$ref": "#/components/parameters/Limit100Max500"} in get["parameters"]
        assert {"$ref": "#/components/parameters/Cursor"} in get["parameters"]
        assert post["parameters"] == [{"$ref": "#/components/parameters/Idempotency-Key"}]
        assert post["responses"]["201"]["headers"]["Idempotent-Replayed"] == {
            "$ref": "#/components/headers/Idempotent-Replayed"}
        for status, response in {**get["responses"], **post["responses"]}.items():
            expected = {} if status in ("414", "431") else {"$ref": "#/components/headers/X-Request-Id"}
            assert response.get("headers", {}).get("X-Request-Id", {}) == expected, (path, status)
    assert components["parameters"]["Idempotency-Key"]["in"] == "header"
    assert components["parameters"]["Limit100Max500"]["schema"]["maximum"] == 500
    assert {"Idempotent-Replayed", "X-Request-Id", "RateLimit", "RateLimit-Policy"} <= set(components["headers"])
    assert {"$ref": "#/components/parameters/X-Service-Event-Id"} in doc["webhooks"]["widget.changed"]["post"]["parameters"]
    text = json.dumps(doc)
    assert text.count('"name": "Idempotency-Key"') == 1 and text.count('"name": "cursor"') == 1
    whole = inline_refs(doc)  # what a reader sees: the parameter itself
    assert whole["paths"]["/gadgets"]["post"]["parameters"][0]["name"] == "Idempotency-Key"


def test_ids_are_uuids_and_no_automatic_titles_are_left():
    doc = document()
    widget = doc["components"]["schemas"]["Widget"]
    assert widget["properties"]["id"] == {"type": "string", "format": "uuid"}
    assert widget["properties"]["ownerUserId"]["anyOf"][0] == {"type": "string", "format": "uuid"}
    assert "uuid" not in json.dumps(widget["properties"]["crmId"])
    [path_id] = [p for p in doc["paths"]["/widgets/{widget_id}"]["get"]["parameters"] if p.get("in") == "path"]
    assert path_id["schema"] == {"type": "string", "format": "uuid"}
    assert '"title": "' not in json.dumps(doc["components"]["schemas"])  # Totalcontractvalue, Widget, ...


def test_the_introduction_covers_what_every_operation_shares():
    description = document()["info"]["description"]
    for heading in ("Authentication", "Errors", "Paging", "Idempotency", "Rate limits", "Webhooks", "Versioning"):
        assert f"## {heading}" in description, heading
    for header in ("x-api-key", "Idempotency-Key", "Idempotent-Replayed", "RateLimit-Policy", "Retry-After",
                   "X-Request-Id", "nextCursor", "Deprecation", "webhook.verify("):
        assert header in description, header


_ROOT = Path(__file__).resolve().parents[4]
_CODE = re.compile(r"""\bcode\s*=\s*["']([a-z_]+)["']|Failure\(\s*["']([a-z_]+)["']|invalid_field\([^)]*["']([a-z_]+)["']\)""")
_POSITIONAL_CODE = re.compile(r"""\bProblem\(\s*\d{3}\s*,(?:[^()]|\([^()]*\))*?["']([a-z_]+)["']\s*,?\s*\)""")


def test_the_error_table_lists_every_code_the_services_answer():
    sources = [*(_ROOT / "libs/common/src").rglob("*.py"),
               *(p for service in ("api", "webhook-dispatcher", "billing-connector")
                 for p in (_ROOT / "services" / service / "src").rglob("*.py"))]
    found = {code for path in sources for match in _CODE.finditer(path.read_text()) for code in match.groups() if code}
    # the edge's answers, written positionally: Problem(status, ..., "code")
    found |= {match.group(1) for path in sources for match in _POSITIONAL_CODE.finditer(path.read_text())}
    found.discard("error")  # the base class's placeholder, never answered
    assert len(found) > 50
    listed = [code for _, code, _ in ERROR_CODES]
    assert sorted(found - set(listed)) == []
    assert len(listed) == len(set(listed))
    table = document()["info"]["description"]
    assert all(f"| `{code}` |" in table for code in listed)
