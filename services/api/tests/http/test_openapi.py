"""The OpenAPI document against what the server enforces: every operation is documented with its
scope, and every documented scope is enforced (403 naming it without, never a scope 403 with it).
The api's own document (``/internal/v1``): the public one is it without the console's operations."""

import re

import pytest

from dps_common.auth.scopes import Role
from dps_testing.openapi_checks import (
    assert_every_request_body_has_a_valid_example,
    assert_every_responder_documented,
    assert_missing_key_refused,
    assert_scopes_enforced,
)

OWN = "/internal/v1/openapi.json"


def test_document_is_openapi_31_with_scopes_and_errors_on_every_operation(client):
    doc = client.simulate_get(OWN).json
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["apiKey"] == {"type": "apiKey", "in": "header", "name": "x-api-key"}
    operations = [(p, m, op) for p, item in doc["paths"].items() for m, op in item.items()]
    assert operations
    for path, method, op in operations:
        assert "x-required-scopes" in op, (method, path)
        assert "401" in op["responses"], (method, path)
        if op["x-required-scopes"]:
            assert "403" in op["responses"], (method, path)
        if "requestBody" in op:
            assert {"413", "400"} <= set(op["responses"]), (method, path)
        for ref in re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', str(op).replace("'", '"')):
            assert ref in doc["components"]["schemas"], ref


def test_every_request_body_has_an_example_the_server_accepts(app, client):
    doc = client.simulate_get(OWN).json
    assert assert_every_request_body_has_a_valid_example(app, doc) == 22  # approve and reject share one


def test_every_responder_is_documented(app):
    assert_every_responder_documented(app)


def test_documented_scopes_are_what_the_server_enforces(client, org):
    doc = client.simulate_get(OWN).json
    keys = {Role.ADMIN: org.admin.headers, Role.USER: org.user.headers, Role.VIEW_ONLY: org.viewer.headers}
    operations = sum(len(item) for item in doc["paths"].values())
    assert assert_scopes_enforced(client, doc, keys) == 3 * operations


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_operation_refuses_a_missing_key(client, method):
    doc = client.simulate_get(OWN).json
    assert assert_missing_key_refused(client, doc, method)


def _decimal_fields(node, path=""):
    """(where, schema) of every string schema that is a decimal: our request pattern or format decimal."""
    if isinstance(node, dict):
        if node.get("type") == "string" and ("[0-9]{1,15}" in node.get("pattern", "") or node.get("format") == "decimal"):
            yield path, node
        for key, value in node.items():
            yield from _decimal_fields(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _decimal_fields(value, f"{path}/{index}")


def test_decimal_strings_are_marked_in_requests_and_answers(client):
    doc = client.simulate_get(OWN).json
    decimals = list(_decimal_fields(doc["components"]["schemas"]))
    unmarked = [where for where, schema in decimals if schema.get("format") != "decimal"]
    assert not unmarked
    requests = {where.split("/")[1] for where, schema in decimals if "pattern" in schema}
    answers = {where.split("/")[1] for where, schema in decimals if "pattern" not in schema}
    assert {"QuoteLineCreate", "QuoteLineUpdate", "ProductCreate"} <= requests and {"QuoteLine", "QuoteTotals"} <= answers
