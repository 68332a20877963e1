"""Spec section 9, the whole API in one document: the api serves at ``/external/v1/openapi.json`` its
own operations merged with the dispatcher's and the connector's (each fetched from the service's
``/internal/v1/openapi.json``, as in a deployment), valid under openapi-spec-validator, every
operation with its ``x-required-scopes`` and every event type of the three services; the reference
page at ``/external/v1/docs`` presents it.

The suite's shared api starts before the other services' addresses are known, so this module starts
an api of its own, pointed at them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from jsonschema import Draft202012Validator

from dps_common.auth.scopes import ROLE_SCOPES
from dps_common.openapi.components import inline_refs
from dps_testing.openapi_checks import openapi_errors
from dps_testing.processes import gunicorn

DOCUMENT = "/external/v1/openapi.json"
GRANTED = {str(scope) for scopes in ROLE_SCOPES.values() for scope in scopes}  # what an API key may hold
CONSOLE_OPERATIONS = {
    ("get", "/api-keys"), ("post", "/api-keys"), ("post", "/api-keys/{key_id}/rotate"),
    ("post", "/api-keys/{key_id}/revoke"), ("get", "/people"), ("put", "/people/{person_id}/api-key-access"),
}


@pytest.fixture(scope="module")
def origin(server_env, webhooks_server, billing_server, tls_files, stack_logs) -> Iterator[str]:
    parts = ",".join(f"{part}/internal/v1/openapi.json" for part in (webhooks_server, billing_server))
    env = {**server_env, "OPENAPI_PART_URLS": parts, "REQUESTS_CA_BUNDLE": tls_files["ca"]}
    log = stack_logs.path("api (one document)")
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
            public = {method: op for method, op in item.items() if set(op["x-required-scopes"]) <= GRANTED}
            assert merged["paths"].get(path, {}) == public, path
        assert set(own.get("webhooks", {})) <= set(merged["webhooks"])
    assert {"/whoami", "/webhook-configs", "/billing-connection", "/pricing-quotes/{quote_id}/billing-pushes"} <= set(
        merged["paths"])
    assert {"quote.approved", "webhook.test", "billing.quote_pushed"} <= set(merged["webhooks"])
    for path, item in merged["paths"].items():
        for method, operation in item.items():
            assert "x-required-scopes" in operation, (method, path)


def test_every_operation_of_the_document_takes_an_api_key(origin, tls_files, make_org):
    """Try it out works for every operation shown: none needs a scope outside every role's. The
    settings console's own operations (a console sign-in's ``api-keys:manage``) stay in the api's
    own document, for the console's contracts, and out of the public one, with their schemas."""
    merged = requests.get(origin + DOCUMENT, verify=tls_files["ca"], timeout=10).json()
    operations = {(method, path): op for path, item in merged["paths"].items() for method, op in item.items()}
    assert not {key for key, op in operations.items() if not set(op["x-required-scopes"]) <= GRANTED}
    assert not CONSOLE_OPERATIONS & set(operations)
    assert not {"ApiKeyCreate", "ApiKeyWithSecret", "Person", "ApiKeyAccessUpdate"} & set(merged["components"]["schemas"])
    own = _own(origin, tls_files["ca"])
    assert CONSOLE_OPERATIONS <= {(method, path) for path, item in own["paths"].items() for method in item}
    admin = make_org("Try It Out Co").admin  # the highest role's key, as Try it out sends it
    answers = {(method, path): requests.request(method, f"{origin}/external/v1{path.replace('{key_id}', 'x')}",
                                                headers={"x-api-key": admin.key}, verify=tls_files["ca"], timeout=10)
               for method, path in CONSOLE_OPERATIONS if method == "get"}
    assert {key: answer.status_code for key, answer in answers.items()} == {key: 403 for key in answers}


def test_the_reference_page_presents_the_document(origin, tls_files):
    page = requests.get(f"{origin}/external/v1/docs", verify=tls_files["ca"], timeout=10)
    assert page.status_code == 200 and DOCUMENT in requests.get(
        f"{origin}/external/v1/docs/start.js", verify=tls_files["ca"], timeout=10).text


def _enum_classes(models: Path) -> dict[str, tuple[str, ...]]:
    """Each enum class the generator wrote, with its values."""
    enums = {}
    for module in models.glob("*.py"):
        text = module.read_text()
        for match in re.finditer(r"^class (\w+)\(\w*Enum\):\n(.*?)(?=^\S|\Z)", text, re.M | re.S):
            enums[match.group(1)] = tuple(sorted(re.findall(r'^    \w+ = "(.*)"$', match.group(2), re.M)))
    return enums


def test_a_generated_client_has_one_class_per_enumeration(origin, tls_files, tmp_path):
    """openapi-python-client, from the merged document: generated without a warning, one class per
    enumeration (the same values under two class names would be a duplicate), one per schema."""
    merged = requests.get(origin + DOCUMENT, verify=tls_files["ca"], timeout=10).json()
    (tmp_path / "openapi.json").write_text(json.dumps(merged))
    bin_dir = Path(sys.executable).parent  # its formatter (ruff) is found beside it: no warning for that
    result = subprocess.run(
        [str(bin_dir / "openapi-python-client"), "generate", "--path", "openapi.json", "--output-path", "client",
         "--meta", "none"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Warning" not in output and "Error" not in output, output
    enums = _enum_classes(tmp_path / "client" / "models")
    by_values: dict[tuple[str, ...], list[str]] = {}
    for name, values in enums.items():
        by_values.setdefault(values, []).append(name)
    assert {values: names for values, names in by_values.items() if len(names) > 1} == {}
    named = {name for name, schema in merged["components"]["schemas"].items() if "enum" in schema}
    assert len(enums) == len(named) >= 15
    assert {"QuoteStatus", "RequestStatus", "DeliveryStatus", "WebhookConfigStatus", "BillingPushStatus"} <= set(enums)


def test_every_example_in_the_merged_document_is_valid_against_its_schema(origin, tls_files):
    """The examples the reference shows (bodies and answers of the main resources) are what the
    schema allows, formats included (ids are UUIDs, dates are dates)."""
    merged = inline_refs(requests.get(origin + DOCUMENT, verify=tls_files["ca"], timeout=10).json())
    checked = set()
    for name, schema in merged["components"]["schemas"].items():
        for example in schema.get("examples", []):
            if isinstance(example, dict):
                validator = Draft202012Validator({k: v for k, v in schema.items() if k != "examples"},
                                                 format_checker=Draft202012Validator.FORMAT_CHECKER)
                assert [error.message for error in validator.iter_errors(example)] == [], name
                checked.add(name)
    assert {"PricingQuote", "Opportunity", "Product", "WebhookConfig", "Delivery", "BillingPush"} <= checked
