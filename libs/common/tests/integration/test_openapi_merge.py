"""One document from the services' own: merged without loss or overlap, fetched from their real HTTP
servers, and still served (marked incomplete) while a part's service is down."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dps_common.openapi.merge import MergeConflict, merge_documents
from dps_common.openapi.parts import RETRY_SECONDS, DocumentAssembler, fetch_json

PROBLEM = {"type": "object", "properties": {"code": {"type": "string"}}}


def _document(title: str, paths: list[str], schemas: dict, webhooks: list[str] = ()) -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": "1.0.0"},
        "servers": [{"url": "/external/v1"}],
        "paths": {path: {"get": {"operationId": f"{title}{path}", "x-required-scopes": []}} for path in paths},
        "webhooks": {name: {"post": {"summary": name}} for name in webhooks},
        "components": {"schemas": {"Problem": PROBLEM, **schemas},
                       "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}}},
        "tags": [{"name": title}],
    }


API = _document("api", ["/quotes", "/quotes/{id}"], {"Quote": {"type": "object"}}, ["quote.created"])
HOOKS = _document("webhooks", ["/webhook-configs"], {"Endpoint": {"type": "object"}}, ["webhook.test"])


def test_the_parts_paths_events_schemas_and_tags_are_all_in_the_merged_document():
    before = copy.deepcopy((API, HOOKS))
    merged = merge_documents(API, [HOOKS])
    assert merged["info"] == API["info"]
    assert set(merged["paths"]) == {"/quotes", "/quotes/{id}", "/webhook-configs"}
    assert set(merged["webhooks"]) == {"quote.created", "webhook.test"}
    assert set(merged["components"]["schemas"]) == {"Problem", "Quote", "Endpoint"}
    assert [tag["name"] for tag in merged["tags"]] == ["api", "webhooks"]
    assert (API, HOOKS) == before  # the inputs are untouched


def test_two_owners_of_one_path_are_refused():
    with pytest.raises(MergeConflict, match="/quotes"):
        merge_documents(API, [_document("rogue", ["/quotes"], {})])


def test_two_different_schemas_under_one_name_are_refused():
    with pytest.raises(MergeConflict, match="Quote"):
        merge_documents(API, [_document("rogue", ["/other"], {"Quote": {"type": "string"}})])


class _Parts:
    """A real HTTP server standing for the other services: one path per part, each switchable off."""

    def __init__(self) -> None:
        self.documents: dict[str, dict] = {}
        self.down: set[str] = set()
        parts = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path in parts.down or self.path not in parts.documents:
                    self.send_error(503)
                    return
                body = json.dumps(parts.documents[self.path]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture
def parts() -> Iterator[_Parts]:
    served = _Parts()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


def test_the_assembler_merges_what_the_services_serve_and_waits_out_a_part_that_is_down(parts):
    parts.documents["/hooks"] = HOOKS
    parts.down.add("/hooks")
    now = [0.0]
    assembler = DocumentAssembler(lambda: API, [parts.url("/hooks")], fetch_json(), clock=lambda: now[0])

    first = assembler.current()
    assert not first.complete and set(first.document["paths"]) == set(API["paths"])

    parts.down.clear()
    assert not assembler.current().complete  # not asked again before the retry gap
    now[0] += RETRY_SECONDS
    second = assembler.current()
    assert second.complete and "/webhook-configs" in second.document["paths"]

    parts.down.add("/hooks")  # down again: its last good copy stays in the document
    now[0] += 3600
    third = assembler.current()
    assert third.complete and "/webhook-configs" in third.document["paths"]


def test_a_part_that_is_not_an_openapi_document_is_left_out(parts):
    parts.documents["/junk"] = {"hello": "world"}
    assembled = DocumentAssembler(lambda: API, [parts.url("/junk")], fetch_json()).current()
    assert not assembled.complete and set(assembled.document["paths"]) == set(API["paths"])
