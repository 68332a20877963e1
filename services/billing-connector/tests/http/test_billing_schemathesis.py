"""Property-based run of the billing connector's API against its own OpenAPI document (bounded and
seeded): no server errors, every response valid against the documented schema, status and content type."""

import pytest
import schemathesis

from dps_testing.openapi_checks import bounded_run, conforms

schema = schemathesis.pytest.from_fixture("billing_schema")


@pytest.fixture
def billing_schema(app):
    return schemathesis.openapi.from_wsgi("/external/v1/openapi.json", app)


@pytest.fixture(scope="module")
def admin_key(fake_api) -> str:
    return fake_api.organization().admin.key


@pytest.mark.slow
@schema.parametrize()
@bounded_run
def test_billing_connector_api_conforms_to_its_openapi_document(case, admin_key):
    conforms(case, admin_key)
