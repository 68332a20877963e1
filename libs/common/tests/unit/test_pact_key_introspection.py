"""Key introspection as the services other than the api read it (``dps_common.auth.introspection``,
used by the dispatcher, the connector and the console), written as a consumer-driven contract (Pact)
for the api: the real ``IntrospectingAuthenticator`` calls the Pact mock server, and what it reads is
recorded in ``pacts/key-introspection-client-api.json`` (committed; the api's suite verifies it against
a real api server: services/api/tests/integration/test_pact_provider.py).

The keys are the provider's: each provider state issues (or revokes) one and returns it, and the
verifier puts it in the request body. What is recorded is compared with the committed file, so a
change of what the client reads fails here until the pact file is rewritten:
``PACT_WRITE=1 pytest <this file>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pact import Pact, generate, match
from pact.match.matcher import GenericMatcher

from dps_common.auth.cache import TtlCache
from dps_common.auth.introspection import INTROSPECTION_PATH, IntrospectingAuthenticator
from dps_common.auth.scopes import Role
from dps_common.errors import Unauthorized
from dps_testing.pacts import ConsumerContract

CONTRACT = ConsumerContract("key-introspection-client")
TOKEN = "client-token-0123456789abcdef"  # the provider verifies with its own token (a custom header)
KEY_RE = r"^dps_[A-Za-z0-9-]+_\S+$"
ORG = "00000000-0000-4000-8000-000000000002"
USER = "00000000-0000-4000-8000-000000000004"
BEARER = match.regex(f"Bearer {TOKEN}", regex=r"^Bearer \S+$")


def presented(example: str) -> dict[str, Any]:
    """The request body: the key the provider state made (``${key}``)."""
    return {"key": GenericMatcher("regex", example, regex=KEY_RE, generator=generate.provider_state("${key}"))}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from CONTRACT.recorded(tmp_path_factory.mktemp("pacts"))


@pytest.fixture
def pact(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
    yield from CONTRACT.pact(recorded, monkeypatch)


def expect(pact: Pact, description: str, state: str, key: str, answer: dict[str, Any]) -> None:
    (
        pact.upon_receiving(description)
        .given(state)
        .with_request("POST", INTROSPECTION_PATH)
        .with_header("Authorization", BEARER)
        .with_body(presented(key), content_type="application/json")
        .will_respond_with(200)
        .with_body(answer, content_type="application/json")
    )


def test_an_active_integration_key_is_its_principal(pact: Pact):
    key = "dps_k3y1d_s3cr3t"
    expect(pact, "an introspection of an active integration key", "an active integration key", key, {
        "active": True,
        "organizationId": match.uuid(ORG),
        "organizationName": match.str("Initech"),
        "userId": match.uuid(USER),
        "role": match.regex("user", regex=r"^(admin|user|view only)$"),
        "keyId": match.str("k3y1d"),
        "console": False,
        "apiKeyAccess": match.bool(False),
        "expiresAt": None,  # an integration key works until it is revoked
    })
    with pact.serve() as server:
        principal = IntrospectingAuthenticator(str(server.url), TOKEN, TtlCache(60)).authenticate(key)
    assert (principal.organization_id, principal.user_id, principal.role) == (UUID(ORG), UUID(USER), Role.USER)
    assert principal.key_id == "k3y1d" and principal.console is False


@pytest.mark.parametrize(
    ("description", "state"),
    [
        ("an introspection of a revoked key", "a revoked key"),
        ("an introspection of a key the api does not know", "an unknown key"),
    ],
)
def test_an_inactive_key_is_refused(pact: Pact, description: str, state: str):
    key = "dps_r3v0k3d_s3cr3t"
    expect(pact, description, state, key, {"active": False})
    with pact.serve() as server:
        with pytest.raises(Unauthorized) as raised:
            IntrospectingAuthenticator(str(server.url), TOKEN, TtlCache(60)).authenticate(key)
    assert raised.value.code == "invalid_api_key"
