"""The console's operations (``/api-keys``, ``/people``) run property-based with an admin's console
credential, the only kind that gets past their scope: no server error, every answer as documented.
(The whole-API run uses an integration key, which these operations refuse with 403.)"""


import pytest
import schemathesis

from dps_testing.openapi_checks import bounded_run, conforms

from api_orgs import TOKEN, sign_in

schema = schemathesis.pytest.from_fixture("console_schema").include(tag=["API keys", "Team"])


@pytest.fixture(scope="module")
def settings(settings):
    return settings.model_copy(update={"console_api_token": TOKEN})


@pytest.fixture
def console_schema(app):
    return schemathesis.openapi.from_wsgi("/internal/v1/openapi.json", app)  # the public one leaves them out


@pytest.mark.slow
@schema.parametrize()
@bounded_run
def test_console_operations_conform_to_the_document(case, client, org):
    conforms(case, sign_in(client, "admin@acme-corp.example").credential)
