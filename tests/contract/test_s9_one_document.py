"""Spec section 9, the whole API in one document: the api serves at ``/external/v1/openapi.json`` its
own operations merged with the dispatcher's and the connector's (each fetched from the service's
``/internal/v1/openapi.json``, as in a deployment), valid under openapi-spec-validator, every
operation with its ``x-required-scopes`` and every event type of the three services; the reference
page at ``/external/v1/docs`` presents it.

The suite's shared api starts before the other services' addresses are known, so this module starts
an api of its own, pointed at them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from dps_common.testing.openapi_checks import openapi_errors
from dps_common.testing.processes import gunicorn

DOCUMENT = "/external/v1/openapi.json"


@pytest.fixture(scope="module")
def origin(server_env, webhooks_server, billing_server, tls_files, tmp_path_factory) -> Iterator[str]:
    parts = ",".join(f"{part}/internal/v1/openapi.json" for part in (webhooks_server, billing_server))
    env = {**server_env, "OPENAPI_PART_URLS": parts, "REQUESTS_CA_BUNDLE": tls_files["ca"]}
    log = tmp_path_factory.mktemp("one-document") / "api.log"
    with gunicorn("dps_api.wsgi:create()", env, tls_files, log) as served:
        yield served


def _own(origin: str, ca_file: str) -> dict:
    resp = requests.get(f"{origin}/internal/v1/openapi.json", verify=ca_file, timeout=10)
    assert resp.status_code == 200
    return resp.json()


def test_one_valid_document_holds_every_services_operations_and_events(origin, webhooks_server, billing_server,
                                                                       tls_files):
    resp = requests.get(origin + DOCUMENT, verify=tls_files["ca"], timeout=10)
    assert resp.status_code == 200 and "x-document-incomplete" not in resp.headers
    merged = resp.json()
    assert openapi_errors(merged) == []
    for part in (origin, webhooks_server, billing_server):
        own = _own(part, tls_files["ca"])
        for path, item in own["paths"].items():
            assert merged["paths"][path] == item, path
        assert set(own.get("webhooks", {})) <= set(merged["webhooks"])
    assert {"/whoami", "/webhook-configs", "/billing-connection", "/pricing-quotes/{quote_id}/billing-pushes"} <= set(
        merged["paths"])
    assert {"quote.approved", "webhook.test", "billing.quote_pushed"} <= set(merged["webhooks"])
    for path, item in merged["paths"].items():
        for method, operation in item.items():
            assert "x-required-scopes" in operation, (method, path)


def test_the_reference_page_presents_the_document(origin, tls_files):
    page = requests.get(f"{origin}/external/v1/docs", verify=tls_files["ca"], timeout=10)
    assert page.status_code == 200 and DOCUMENT in requests.get(
        f"{origin}/external/v1/docs/start.js", verify=tls_files["ca"], timeout=10).text
