"""Which budget a request spends, through ``dps_common.http.app.Api`` (the middleware every service
runs, in its order) counted in the machine's Redis (a key prefix per test): a valid key sent to an
unknown path is its organization's business, and the reference page and the OpenAPI document have a
budget of their own, which failed keys from the same address do not spend."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import falcon
import falcon.testing
import pytest

from dps_common.auth.authenticator import INVALID_KEY, MISSING_KEY
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.errors import Unauthorized
from dps_common.http.app import API_PREFIX, Api
from dps_common.http.operations import Operation
from dps_common.ratelimit.settings import RateLimitSettings
from dps_testing.rate_limits import key_prefix, redis_url

ADDRESS = "198.51.100.20"
GOOD_KEY = "dps_goodkey1_" + "g" * 40
BAD_KEY = "dps_badkey01_" + "b" * 40
ORGANIZATION = Principal(uuid.uuid4(), "Acme", uuid.uuid4(), Role.ADMIN, "goodkey1")
POLICY = re.compile(r'^"(\w+)";q=(\d+);w=(\d+)$')
LIMIT = re.compile(r'^"(\w+)";r=(\d+);t=(\d+)$')


class OneKey:
    """The ``KeyAuthenticator`` of an organization with one key: the service's own authenticator
    looks keys up in its tables or asks the api, which this file is not about."""

    def authenticate(self, raw_key: str | None) -> Principal:
        if raw_key is None:
            raise Unauthorized(MISSING_KEY, code="missing_api_key")
        if raw_key != GOOD_KEY:
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return ORGANIZATION


class Things:
    operations = {"GET": Operation(summary="List things.", scope=None)}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"things": []}


class Page:
    """Stands for the api's reference page and its assets (``dps_api.resources.reference``)."""

    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str = "") -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = "<!doctype html><title>reference</title>"


@pytest.fixture(scope="module")
def redis() -> str:
    return redis_url()


@pytest.fixture
def client(redis: str) -> Iterator[falcon.testing.TestClient]:
    with key_prefix(redis) as prefix:
        settings = RateLimitSettings(storage_url=redis, key_prefix=prefix, organization="5/minute",
                                     anonymous="3/minute", documentation="20/minute", lease_seconds=0)
        api = Api("rate-limit-test", OneKey(), {}, rate_limits=settings)
        api.add("/things", Things())
        api.app.add_route(API_PREFIX + "/docs", Page())
        api.app.add_route(API_PREFIX + "/docs/assets/{name}", Page())
        api.publish_openapi("Test", "1")
        yield falcon.testing.TestClient(api.app)


def spent(resp: falcon.testing.Result) -> tuple[str, int, int]:
    """(policy, quota, remaining) from the answer's RateLimit-Policy and RateLimit fields."""
    policy, limit = POLICY.match(resp.headers["RateLimit-Policy"]), LIMIT.match(resp.headers["RateLimit"])
    assert policy and limit and policy.group(1) == limit.group(1), resp.headers
    return policy.group(1), int(policy.group(2)), int(limit.group(2))


def test_a_valid_key_sent_to_an_unknown_path_spends_its_organizations_budget(client):
    lost = client.simulate_get(f"{API_PREFIX}/no-such-thing", headers={"x-api-key": GOOD_KEY}, remote_addr=ADDRESS)
    assert lost.status_code == 404
    assert spent(lost) == ("organization", 5, 4)
    # the address's anonymous budget is untouched
    anonymous = client.simulate_get(f"{API_PREFIX}/things", remote_addr=ADDRESS)
    assert anonymous.status_code == 401 and spent(anonymous) == ("anonymous", 3, 2)
    # and the organization's is one budget, whatever the path
    assert spent(client.simulate_get(f"{API_PREFIX}/things", headers={"x-api-key": GOOD_KEY})) == ("organization", 5, 3)


def test_an_organization_over_its_budget_gets_429_on_unknown_paths_too(client):
    for _ in range(5):
        assert client.simulate_get(f"{API_PREFIX}/things", headers={"x-api-key": GOOD_KEY}).status_code == 200
    lost = client.simulate_get(f"{API_PREFIX}/no-such-thing", headers={"x-api-key": GOOD_KEY}, remote_addr=ADDRESS)
    assert lost.status_code == 429 and "organization" in lost.json["detail"]


def test_an_invalid_key_sent_to_an_unknown_path_spends_the_addresss_budget(client):
    lost = client.simulate_get(f"{API_PREFIX}/no-such-thing", headers={"x-api-key": BAD_KEY}, remote_addr=ADDRESS)
    assert lost.status_code == 404 and spent(lost) == ("anonymous", 3, 2)


def test_the_documentation_is_served_to_an_address_that_spent_its_anonymous_budget_on_failed_keys(client):
    probes = [client.simulate_get(f"{API_PREFIX}/things", headers={"x-api-key": BAD_KEY}, remote_addr=ADDRESS)
              for _ in range(4)]
    assert [p.status_code for p in probes] == [401, 401, 401, 429]
    for path in ("/openapi.json", "/docs", "/docs/assets/swagger-ui.css"):
        resp = client.simulate_get(API_PREFIX + path, remote_addr=ADDRESS)
        assert resp.status_code == 200, (path, resp.status_code)
        assert spent(resp)[:2] == ("documentation", 20)
    # reading the documentation spent nothing of the anonymous budget (still refused, not reset)
    assert client.simulate_get(f"{API_PREFIX}/things", remote_addr=ADDRESS).status_code == 429


def test_the_documentation_has_a_budget_of_its_own(client):
    answers = [client.simulate_get(f"{API_PREFIX}/openapi.json", remote_addr=ADDRESS) for _ in range(21)]
    assert [a.status_code for a in answers] == [200] * 20 + [429]
    assert "documentation" in answers[-1].json["detail"] and int(answers[-1].headers["Retry-After"]) >= 1
    # the anonymous budget of the address is untouched
    assert spent(client.simulate_get(f"{API_PREFIX}/things", remote_addr=ADDRESS)) == ("anonymous", 3, 2)


@pytest.mark.parametrize(("path", "limited", "documentation"), [
    ("/external/v1", True, False), ("/external/v1/", True, False), ("/external/v1/things", True, False),
    ("/external/v1x", False, False), ("/external/v1x/docs", False, False), ("/healthz", False, False),
    ("/internal/v1/key-introspection", False, False), ("/external/v1/openapi.json", True, True),
    ("/external/v1/openapi.jsonx", True, False), ("/external/v1/docs", True, True), ("/external/v1/docs/", True, True),
    ("/external/v1/docs/assets/swagger-ui.css", True, True), ("/external/v1/docsx", True, False),
])
def test_which_paths_are_limited_and_which_are_documentation(path, limited, documentation):
    from types import SimpleNamespace

    from dps_common.http.rate_limit import _documentation, _limited

    req = SimpleNamespace(path=path)
    assert (_limited(req), _documentation(req)) == (limited, documentation)
