"""Spec section 9 for the billing connector: served under ``/external/v1`` like the api (one API to
a client), other version paths not found; its machine-readable description (OpenAPI 3.1 at
``/external/v1/openapi.json``) lists every operation of the connector with ``x-required-scopes``,
the keyed ones with the ``x-api-key`` scheme and the two public ones (the browser's callback, the
platform's signed webhooks) without, and the ``billing.*`` events it publishes. Every request the contract tests send the connector is checked
against this document as it is made (``contract_billing.DocumentedApi``)."""

from __future__ import annotations

import pytest

from contract_client import assert_problem

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
CONNECTOR_OPERATIONS = {
    ("GET", "/billing-connection"): ["billing:manage"],
    ("DELETE", "/billing-connection"): ["billing:manage"],
    ("POST", "/billing-connection/authorize"): ["billing:manage"],
    ("GET", "/billing-connection/start"): [],
    ("GET", "/billing-connection/callback"): [],
    ("GET", "/billing-pushes"): ["quotes:read"],
    ("POST", "/billing-platform/webhooks"): [],
    ("POST", "/pricing-quotes/{quote_id}/billing-pushes"): ["billing:push"],
    ("GET", "/pricing-quotes/{quote_id}/billing-pushes"): ["quotes:read"],
    ("GET", "/pricing-quotes/{quote_id}/billing-pushes/{push_id}"): ["quotes:read"],
}
PUBLIC = {
    ("GET", "/billing-connection/start"), ("GET", "/billing-connection/callback"), ("POST", "/billing-platform/webhooks"),
}


@pytest.fixture(scope="module")
def org(make_org):
    return make_org("Billing Versions Co")


@pytest.fixture(scope="module")
def openapi(billing):
    resp = billing.connector.get("/openapi.json")
    assert resp.status_code == 200, resp.text[:500]
    assert resp.headers["content-type"].startswith("application/json")
    return resp.json()


def test_the_document_is_openapi_3_1_relative_to_the_versioned_base(openapi):
    assert openapi["openapi"].startswith("3.1")
    assert openapi["info"]["title"] and openapi["info"]["version"]
    assert openapi["servers"][0]["url"].endswith("/external/v1")
    assert not any(path.startswith("/external") for path in openapi["paths"])


def test_the_document_lists_every_connector_operation_with_its_required_scopes(openapi):
    documented = {
        (method.upper(), path): op.get("x-required-scopes")
        for path, item in openapi["paths"].items()
        for method, op in item.items()
        if method in HTTP_METHODS
    }
    assert documented == CONNECTOR_OPERATIONS


def test_the_document_lists_the_events_the_connector_publishes(openapi):
    assert set(openapi["webhooks"]) == {
        "billing.connection.connected", "billing.connection.broken", "billing.connection.removed",
        "billing.quote_pushed", "billing.push_failed",
    }


def test_keyed_operations_use_the_api_key_header_and_public_ones_none(openapi):
    [(scheme_name, scheme)] = openapi["components"]["securitySchemes"].items()
    assert {"type": "apiKey", "in": "header", "name": "x-api-key"}.items() <= scheme.items()
    for (method, path) in CONNECTOR_OPERATIONS:
        op = openapi["paths"][path][method.lower()]
        if (method, path) in PUBLIC:
            assert op["security"] == [] and "401" not in op["responses"], f"{method} {path}"
        else:
            assert op["security"] == [{scheme_name: []}], f"{method} {path}"
            assert "401" in op["responses"] and "403" in op["responses"], f"{method} {path}"


def test_the_contract_tests_requests_are_documented_operations(billing):
    """The check every request of these tests passes through, shown to refuse what is not documented."""
    assert billing.connector.operation("GET", "/pricing-quotes/abc/billing-pushes?limit=2") == (
        "GET", "/pricing-quotes/{quote_id}/billing-pushes")
    for method, path in (("PUT", "/billing-connection"), ("POST", "/billing-pushes"),
                         ("DELETE", "/pricing-quotes/abc/billing-pushes/def")):
        with pytest.raises(AssertionError, match="not an operation"):
            billing.connector.call(method, path)


@pytest.mark.parametrize("path", ["/external/v2/billing-connection", "/external/billing-connection",
                                  "/billing-connection", "/v1/billing-connection"])
def test_other_version_paths_are_not_found(billing, org, path):
    assert_problem(billing.connector.get(path, org.admin, absolute=True), 404)


def test_answers_are_json_objects(billing, org):
    quote = billing.simple_quote(org)
    for path in ("/billing-connection", billing.pushes_path(quote["id"])):
        resp = billing.connector.get(path, org.admin)
        assert resp.headers["content-type"].split(";")[0] in ("application/json", "application/problem+json")
        assert isinstance(resp.json(), dict)
