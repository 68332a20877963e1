"""Spec section 9: the version is the path segment /external/v1; responses are JSON objects (clients
ignore unknown fields, so the server only promises objects they can extend); the machine-readable
description is OpenAPI 3.1 and states each operation's required scopes."""

from __future__ import annotations

import pytest

from contract_client import assert_problem

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def test_everything_is_served_under_external_v1(api, org):
    assert api.base_url.endswith("/external/v1")
    resp = api.get("/whoami", org.viewer)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("path", ["/external/v2/whoami", "/external/v2/products", "/external/whoami", "/whoami", "/v1/whoami"])
def test_other_version_paths_are_not_found(api, org, path):
    assert_problem(api.get(path, org.admin, absolute=True), 404)


LISTS = ["/products", "/pricebooks", "/opportunities", "/pricing-quotes", "/approval-groups", "/approval-rules",
         "/approval-rule-groups", "/approvals"]


def test_responses_are_json_objects(api, org):
    """Clients must ignore fields they do not know: every answer is an object they can extend."""
    for path in ["/whoami", "/openapi.json", *LISTS, "/deal-groups?opportunityId=00000000-0000-7000-8000-000000000000"]:
        resp = api.get(path, org.admin)
        assert resp.headers["content-type"].split(";")[0] in ("application/json", "application/problem+json"), path
        assert isinstance(resp.json(), dict), path
    for path in LISTS:
        body = api.ok("GET", path, org.admin, params={"limit": 1})
        assert all(isinstance(item, dict) for key, value in body.items() if isinstance(value, list) for item in value)


@pytest.fixture(scope="module")
def openapi(api):
    resp = api.get("/openapi.json")
    assert resp.status_code == 200, resp.text[:500]
    assert resp.headers["content-type"].startswith("application/json")
    return resp.json()


def test_openapi_document_is_3_1(openapi):
    assert openapi["openapi"].startswith("3.1")
    assert openapi["info"]["title"] and openapi["info"]["version"]


def test_openapi_paths_are_relative_to_the_versioned_base(openapi):
    assert openapi["servers"][0]["url"].endswith("/external/v1")
    assert "/whoami" in openapi["paths"]
    assert not any(path.startswith("/external") for path in openapi["paths"])


def test_every_operation_states_its_required_scopes(openapi):
    operations = [
        (path, method, op)
        for path, item in openapi["paths"].items()
        for method, op in item.items()
        if method in HTTP_METHODS
    ]
    assert operations
    for path, method, op in operations:
        assert "x-required-scopes" in op, f"{method.upper()} {path} has no x-required-scopes"
        assert isinstance(op["x-required-scopes"], list), f"{method.upper()} {path}"
        assert all(isinstance(s, str) and s for s in op["x-required-scopes"]), f"{method.upper()} {path}"


def test_openapi_documents_the_api_key_header(openapi):
    schemes = openapi["components"]["securitySchemes"]
    assert {"type": "apiKey", "in": "header", "name": "x-api-key"}.items() <= next(iter(schemes.values())).items()
