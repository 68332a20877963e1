"""The api's internal console operations as the console calls them (``ConsoleCredentials``: who may
get a sign-in mail, a console credential for a session, its revocation), written as a consumer-driven
contract (Pact) for the api: ``pacts/console-api.json`` (committed; the api's suite verifies it against
a real api server: services/api/tests/integration/test_pact_provider.py).

The people, emails and key ids are the provider's: each provider state makes them and returns them,
and the verifier puts them in the requests. What is recorded is compared with the committed file:
``PACT_WRITE=1 pytest <this file>`` rewrites it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pact import Pact, generate, match
from pact.match.matcher import GenericMatcher

from dps_testing.pacts import ConsumerContract

from dps_console.adapters.backends import Backends
from dps_console.adapters.console_credentials import PREFIX, ConsoleCredentials

CONTRACT = ConsumerContract("console")
TOKEN = "console-token-0123456789abcdef"  # the provider verifies with its own token (a custom header)
BEARER = match.regex(f"Bearer {TOKEN}", regex=r"^Bearer \S+$")
EMAIL = "admin@initech.example"
SESSION = "5f0c6f8e-5b8e-4a53-9a55-3c1d2b7a9e10"


def from_state(example: str, regex: str, expression: str) -> GenericMatcher[str]:
    return GenericMatcher("regex", example, regex=regex, generator=generate.provider_state(expression))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from CONTRACT.recorded(tmp_path_factory.mktemp("pacts"))


@pytest.fixture
def pact(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
    yield from CONTRACT.pact(recorded, monkeypatch)


def credentials(url: str) -> ConsoleCredentials:
    return ConsoleCredentials(Backends.from_urls(url, url, url, url, timeout=5).internal, TOKEN)


def post(pact: Pact, description: str, state: str, path: str, body: dict[str, Any], status: int) -> Any:
    return (
        pact.upon_receiving(description)
        .given(state)
        .with_request("POST", PREFIX + path)
        .with_header("Authorization", BEARER)
        .with_body(body, content_type="application/json")
        .will_respond_with(status)
    )


def test_a_person_of_an_organization_may_get_a_sign_in_mail(pact: Pact):
    body = {"email": from_state(EMAIL, r"^\S+@\S+$", "${email}")}
    post(pact, "a sign-in candidate check for a person", "an active person", "/sign-in-candidates", body, 200).with_body(
        {"known": True}, content_type="application/json"
    )
    with pact.serve() as server:
        assert credentials(str(server.url)).is_candidate(EMAIL) is True


def test_an_unknown_email_gets_no_sign_in_mail(pact: Pact):
    body = {"email": "nobody@nowhere.example"}
    post(pact, "a sign-in candidate check for an unknown email", "no person with that email", "/sign-in-candidates", body, 200).with_body(
        {"known": False}, content_type="application/json"
    )
    with pact.serve() as server:
        assert credentials(str(server.url)).is_candidate("nobody@nowhere.example") is False


def test_a_sign_in_gets_a_credential_acting_as_the_person(pact: Pact):
    body = {"email": from_state(EMAIL, r"^\S+@\S+$", "${email}"), "sessionId": match.uuid(SESSION)}
    post(pact, "a console credential for a person", "an active person", "/credentials", body, 201).with_body(
        {
            "credential": match.regex("dps_k3y1d_s3cr3t", regex=r"^dps_[A-Za-z0-9-]+_\S+$"),
            "keyId": match.str("k3y1d"),
            "person": {
                "userId": match.uuid("00000000-0000-4000-8000-000000000004"),
                "email": match.str(EMAIL),
                "name": match.str("Admin"),
                "role": match.regex("admin", regex=r"^(admin|user|view only)$"),
                "apiKeyAccess": match.bool(False),
                "organizationId": match.uuid("00000000-0000-4000-8000-000000000002"),
                "organizationName": match.str("Initech"),
            },
        },
        content_type="application/json",
    )
    with pact.serve() as server:
        credential = credentials(str(server.url)).issue(EMAIL, SESSION)
    assert credential is not None and credential.key_id == "k3y1d" and credential.secret == "dps_k3y1d_s3cr3t"
    assert (credential.person.role, credential.person.organization_name) == ("admin", "Initech")


def test_an_unknown_email_gets_no_credential(pact: Pact):
    body = {"email": "nobody@nowhere.example", "sessionId": match.uuid(SESSION)}
    post(pact, "a console credential for an unknown email", "no person with that email", "/credentials", body, 404)
    with pact.serve() as server:
        assert credentials(str(server.url)).issue("nobody@nowhere.example", SESSION) is None


def test_a_sign_out_revokes_the_credential(pact: Pact):
    path = from_state(f"{PREFIX}/credentials/k3y1d", rf"^{PREFIX}/credentials/[A-Za-z0-9-]+$", f"{PREFIX}/credentials/${{keyId}}")
    (
        pact.upon_receiving("the revocation of a console credential")
        .given("a console credential")
        .with_request("DELETE", path)
        .with_header("Authorization", BEARER)
        .will_respond_with(204)
    )
    with pact.serve() as server:
        credentials(str(server.url)).revoke("k3y1d")
