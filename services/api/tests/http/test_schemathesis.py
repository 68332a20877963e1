"""Property-based run of the whole API against its own OpenAPI document (bounded and seeded):
no server errors, every response valid against the documented schema, status and content type,
and schema-violating requests never answered with a server error."""

import pytest
import schemathesis

from dps_testing.openapi_checks import bounded_run, conforms

schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def api_schema(app):
    return schemathesis.openapi.from_wsgi("/external/v1/openapi.json", app)


@pytest.mark.slow
@schema.parametrize()
@bounded_run
def test_api_conforms_to_its_openapi_document(case, org):
    conforms(case, org.admin.key)
