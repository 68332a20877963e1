"""Checks every service's HTTP suite runs against its own OpenAPI document: each responder is
documented, each documented scope is what the server enforces, a missing key is the spec's 401,
and a bounded, seeded schemathesis run finds no server error and no off-schema response."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from typing import Any, Protocol

import falcon.testing
from hypothesis import HealthCheck, settings
from openapi_spec_validator import OpenAPIV31SpecValidator
from schemathesis import Case
from schemathesis.checks import negative_data_rejection, positive_data_acceptance

from dps_common.auth.authenticator import MISSING_KEY
from dps_common.auth.scopes import ROLE_SCOPES, Role


class DocumentedApp(Protocol):
    """An app that lists the routes it documents (``dps_common.http.app.ServiceApp``)."""

    documented_routes: list[tuple[str, object]]


_RESPONDER = re.compile(r"^on_(get|post|put|patch|delete)$")

# The same examples on every run, a bounded number of them.
bounded_run = settings(max_examples=15, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))


def conforms(case: Case[Any], api_key: str) -> None:
    """Call ``case`` with ``api_key`` and validate the answer against the document.

    A schema-valid request may still break a business rule (an id of nothing, a refused URL, a
    foreign cursor), and then a 4xx is right: positive_data_acceptance does not apply. Unknown query
    parameters are ignored like unknown body fields (spec section 4), which negative_data_rejection
    counts as a failure; schema-violating values are refused, as the per-endpoint tests check field
    by field. Invalid input is still generated, and must never cause a 5xx or an off-schema answer."""
    case.call_and_validate(
        headers={"x-api-key": api_key}, excluded_checks=[positive_data_acceptance, negative_data_rejection]
    )


def concrete(path: str) -> str:
    """A documented path with a random id in each parameter."""
    return re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), path)


def assert_every_responder_documented(app: DocumentedApp) -> None:
    for path, resource in app.documented_routes:
        served = {match.group(1).upper() for name in dir(resource) if (match := _RESPONDER.match(name))}
        assert served == set(getattr(resource, "operations", {})), path


def assert_scopes_enforced(
    client: falcon.testing.TestClient, doc: Mapping[str, Any], headers_by_role: Mapping[Role, dict[str, str]]
) -> int:
    """Every documented operation, called with a key of each role: 403 naming the first scope the
    role lacks, never a scope 403 (nor a 401, nor a 5xx) with all of them. Returns the calls made."""
    checked = 0
    for path, item in doc["paths"].items():
        for method, op in item.items():
            required = op["x-required-scopes"]
            for role, headers in headers_by_role.items():
                resp = client.simulate_request(
                    method.upper(),
                    "/external/v1" + concrete(path),
                    headers={**headers, "Content-Type": "application/json"},
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
    return checked


def assert_missing_key_refused(client: falcon.testing.TestClient, doc: Mapping[str, Any], method: str) -> int:
    """Every documented operation of ``method`` without a key: the spec's 401. Returns the count."""
    checked = 0
    for path, item in doc["paths"].items():
        if method.lower() in item:
            resp = client.simulate_request(method, "/external/v1" + concrete(path))
            assert resp.status_code == 401, path
            assert resp.json["detail"] == MISSING_KEY
            checked += 1
    return checked


def assert_every_request_body_has_a_valid_example(app: DocumentedApp, doc: Mapping[str, Any]) -> int:
    """Each documented request body shows an example, and the model the server parses it with
    accepts it as JSON; answers how many bodies were checked."""
    checked = 0
    for _, resource in app.documented_routes:
        for op in getattr(resource, "operations", {}).values():
            if op.body is None:
                continue
            examples = doc["components"]["schemas"][op.body.__name__].get("examples")
            assert examples, f"{op.body.__name__} has no example"
            for example in examples:
                op.body.model_validate_json(json.dumps(example))
            checked += 1
    return checked


def openapi_errors(doc: Mapping[str, Any]) -> list[str]:
    """What ``openapi-spec-validator`` finds wrong with ``doc`` as an OpenAPI 3.1 document, one line
    per error (where, and why): empty for a valid document."""
    validator = OpenAPIV31SpecValidator(dict(doc))
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors()]
