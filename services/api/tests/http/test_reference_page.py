"""``/external/v1/docs`` and the documents behind it: served without a key, from the api itself
(no CDN), under a policy that loads nothing from elsewhere; each service's own document is also at
``/internal/v1/openapi.json``, and without parts the external document is that one without the
settings console's operations, which no API key may call."""

from __future__ import annotations

from dps_common.auth.scopes import ROLE_SCOPES
from dps_common.openapi.audience import for_api_keys

DOCS = "/external/v1/docs"
CONSOLE_PATHS = {"/api-keys", "/api-keys/{key_id}/rotate", "/api-keys/{key_id}/revoke", "/people",
                 "/people/{person_id}/api-key-access"}


def test_the_page_needs_no_key_and_loads_only_its_own_assets(client):
    page = client.simulate_get(DOCS)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "http" not in page.text  # every script and style is the api's own
    for asset, kind in [("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css")]:
        served = client.simulate_get(f"{DOCS}/assets/{asset}")
        assert served.status_code == 200 and served.headers["content-type"].startswith(kind)
        assert len(served.content) > 10_000
    start = client.simulate_get(f"{DOCS}/start.js")
    assert start.status_code == 200 and '"/external/v1/openapi.json"' in start.text


def test_only_the_pages_assets_are_served(client):
    for name in ["index.html", "..%2Fcore.py", "swagger-editor.js"]:
        resp = client.simulate_get(f"{DOCS}/assets/{name}")
        assert resp.status_code == 404
        assert resp.headers["content-type"] == "application/problem+json"


def test_without_parts_the_external_document_is_the_apis_own_for_api_keys(client):
    own = client.simulate_get("/internal/v1/openapi.json")
    assert own.status_code == 200
    external = client.simulate_get("/external/v1/openapi.json")
    granted = {str(scope) for scopes in ROLE_SCOPES.values() for scope in scopes}
    assert external.json == for_api_keys(own.json, granted)
    assert "x-document-incomplete" not in external.headers


def test_the_external_document_leaves_out_the_consoles_operations(client):
    """``/api-keys`` and ``/people`` answer 403 to every API key (only a console credential holds
    ``api-keys:manage``): the reference's Try it out could only fail on them."""
    own = client.simulate_get("/internal/v1/openapi.json").json
    external = client.simulate_get("/external/v1/openapi.json").json
    assert CONSOLE_PATHS <= set(own["paths"])
    assert not CONSOLE_PATHS & set(external["paths"])
    assert set(external["paths"]) == set(own["paths"]) - CONSOLE_PATHS
    assert {"ApiKeyCreate", "ApiKeyWithSecret", "PersonList"} <= set(own["components"]["schemas"])
    assert not {"ApiKeyCreate", "ApiKeyWithSecret", "PersonList"} & set(external["components"]["schemas"])
    assert {"Problem", "PricingQuote", "QuoteStatus"} <= set(external["components"]["schemas"])
