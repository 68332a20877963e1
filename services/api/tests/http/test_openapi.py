"""The OpenAPI document against what the server enforces: every operation is documented with its
scope, and every documented scope is enforced (403 naming it without, never a scope 403 with it)."""

import re
import uuid

import pytest

from dps_common.auth.scopes import ROLE_SCOPES, Role

RESPONDER = re.compile(r"^on_(get|post|put|patch|delete)$")


def test_document_is_openapi_31_with_scopes_and_errors_on_every_operation(client):
    doc = client.simulate_get("/external/v1/openapi.json").json
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


def test_every_responder_is_documented(app):
    for path, resource in app.documented_routes:
        served = {RESPONDER.match(name).group(1).upper() for name in dir(resource) if RESPONDER.match(name)}
        assert served == set(getattr(resource, "operations", {})), path


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), path)


def test_documented_scopes_are_what_the_server_enforces(client, org):
    doc = client.simulate_get("/external/v1/openapi.json").json
    keys = {Role.ADMIN: org.admin, Role.USER: org.user, Role.VIEW_ONLY: org.viewer}
    checked = 0
    for path, item in doc["paths"].items():
        for method, op in item.items():
            required = op["x-required-scopes"]
            for role, member in keys.items():
                resp = client.simulate_request(
                    method.upper(),
                    "/external/v1" + _concrete(path),
                    headers={**member.headers, "Content-Type": "application/json"},
                    body="{}",
                )
                lacks = [s for s in required if s not in ROLE_SCOPES[role]]
                if lacks:
                    assert resp.status_code == 403, (method, path, role, resp.status_code)
                    assert resp.json["code"] == "missing_scope"
                    assert resp.json["requiredScope"] == lacks[0]
                    assert lacks[0] in resp.json["detail"]
                else:
                    assert resp.status_code != 401, (method, path, role)
                    assert resp.status_code < 500, (method, path, role, resp.text)
                    assert resp.json is None or resp.json.get("code") != "missing_scope", (method, path, role)
                checked += 1
    assert checked >= 3


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_operation_refuses_a_missing_key(client, method):
    doc = client.simulate_get("/external/v1/openapi.json").json
    for path, item in doc["paths"].items():
        if method.lower() in item:
            resp = client.simulate_request(method, "/external/v1" + _concrete(path))
            assert resp.status_code == 401, path
