"""Property-based run of the dispatcher's API against its own OpenAPI document (bounded and seeded):
no server errors, every response valid against the documented schema, status and content type."""

import pytest
import schemathesis

from dps_testing.openapi_checks import bounded_run, conforms

schema = schemathesis.pytest.from_fixture("webhooks_schema")


@pytest.fixture
def webhooks_schema(app):
    return schemathesis.openapi.from_wsgi("/external/v1/openapi.json", app)


@pytest.mark.slow
@schema.parametrize()
@bounded_run
def test_webhooks_api_conforms_to_its_openapi_document(case, org):
    conforms(case, org.admin.key)
