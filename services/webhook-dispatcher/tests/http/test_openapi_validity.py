"""The dispatcher's OpenAPI document is a valid OpenAPI 3.1 document (openapi-spec-validator), so the
generators and validators clients feed it to accept it."""

from dps_testing.openapi_checks import openapi_errors


def test_the_document_passes_openapi_spec_validator(client):
    assert openapi_errors(client.simulate_get("/external/v1/openapi.json").json) == []
