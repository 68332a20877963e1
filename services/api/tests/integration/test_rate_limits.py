"""Per-organization and per-address request budgets through build_http, counted in the machine's
Redis (a key prefix per test): the RateLimit headers on every answer, 429 with Retry-After, one
budget shared by two app instances, and serving on (fail open) when Redis is unreachable."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import falcon.testing
import pytest
from sqlalchemy import func, select

from dps_common.ratelimit.budget import DECISIONS
from dps_testing.rate_limits import closed_port_url, key_prefix, redis_url

from dps_api.db.models.catalog import Pricebook
from dps_api.settings import Settings

PEPPER = "rate-limit-pepper-0123456789abcdef0123456789ab"
CURSOR_SECRET = "rate-limit-cursors-0123456789abcdef0123456789"
WHOAMI = "/external/v1/whoami"
PRICEBOOKS = "/external/v1/pricebooks"
# structured-field lists (draft-ietf-httpapi-ratelimit-headers-11): a String naming the policy, Integer parameters
POLICY_FIELD = re.compile(r'^"(organization|anonymous)";q=(\d+);w=(\d+)$')
LIMIT_FIELD = re.compile(r'^"(organization|anonymous)";r=(\d+);t=(\d+)$')


@pytest.fixture(scope="module")
def redis() -> str:
    return redis_url()


@pytest.fixture
def prefix(redis: str) -> Iterator[str]:
    with key_prefix(redis) as prefix:
        yield prefix


def limited(database_url: str, **env: str) -> Settings:
    return Settings.from_env({"DATABASE_URL": database_url, "API_KEY_PEPPER": PEPPER, "CURSOR_SECRET": CURSOR_SECRET, **env})


@pytest.fixture
def settings(database_url: str, redis: str, prefix: str) -> Settings:
    return limited(database_url, REDIS_URL=redis, RATE_LIMIT_KEY_PREFIX=prefix,
                   RATE_LIMIT_ORGANIZATION="5/minute", RATE_LIMIT_ANONYMOUS="3/minute")


def budget(resp) -> tuple[str, int, int, int, int]:
    """(policy, quota, window, remaining, reset) from an answer's RateLimit-Policy and RateLimit fields."""
    policy, limit = POLICY_FIELD.match(resp.headers["RateLimit-Policy"]), LIMIT_FIELD.match(resp.headers["RateLimit"])
    assert policy and limit, resp.headers
    assert policy.group(1) == limit.group(1)
    return policy.group(1), int(policy.group(2)), int(policy.group(3)), int(limit.group(2)), int(limit.group(3))


def test_every_answer_of_the_api_carries_the_budget(client, org):
    answers = {
        "whoami": client.simulate_get(WHOAMI, headers=org.viewer.headers),
        "403": client.simulate_post(PRICEBOOKS, json={"name": "X", "currency": "USD"}, headers=org.viewer.headers),
        "400": client.simulate_get(f"{PRICEBOOKS}?limit=nope", headers=org.viewer.headers),
        "401 missing": client.simulate_get(WHOAMI),
        "401 invalid": client.simulate_get(WHOAMI, headers={"x-api-key": "dps_nokey_" + "x" * 40}),
        "404 path": client.simulate_get("/external/v1/no-such-thing"),
    }
    assert [a.status_code for a in answers.values()] == [200, 403, 400, 401, 401, 404]
    organization = [budget(a) for a in list(answers.values())[:3]]
    assert organization == [("organization", 5, 60, 4, organization[0][4]), ("organization", 5, 60, 3, organization[1][4]),
                            ("organization", 5, 60, 2, organization[2][4])]
    anonymous = [budget(a)[:4] for a in list(answers.values())[3:]]
    assert anonymous == [("anonymous", 3, 60, 2), ("anonymous", 3, 60, 1), ("anonymous", 3, 60, 0)]
    assert all(1 <= budget(a)[4] <= 60 for a in answers.values())


def test_health_readiness_and_metrics_are_not_limited(client):
    for path in ("/healthz", "/readyz", "/metrics") * 3:
        resp = client.simulate_get(path)
        assert resp.status_code == 200 and "RateLimit" not in resp.headers and "RateLimit-Policy" not in resp.headers


def test_an_organization_past_its_budget_gets_429_with_retry_after_and_nothing_is_done(client, org, other_org, tx):
    statuses = [client.simulate_get(WHOAMI, headers=org.user.headers).status_code for _ in range(4)]
    refused = client.simulate_post(PRICEBOOKS, json={"name": "Late", "currency": "USD"}, headers=org.admin.headers)
    assert statuses == [200] * 4 and refused.status_code == 201  # the fifth request: the last unit
    refused = client.simulate_post(PRICEBOOKS, json={"name": "Too late", "currency": "USD"}, headers=org.admin.headers)
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json["code"] == "rate_limited" and refused.json["status"] == 429
    assert "5 requests per 60 seconds" in refused.json["detail"] and "Retry after" in refused.json["detail"]
    retry_after = int(refused.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    assert budget(refused) == ("organization", 5, 60, 0, retry_after)
    with tx() as session:  # the refused create did nothing
        assert session.scalar(select(func.count()).select_from(Pricebook).where(Pricebook.name == "Too late")) == 0
    # every key of the organization shares the budget; another organization has its own
    assert client.simulate_get(WHOAMI, headers=org.viewer.headers).status_code == 429
    assert client.simulate_get(WHOAMI, headers=other_org.viewer.headers).status_code == 200


def test_requests_without_a_valid_key_spend_the_address_budget(client, org):
    bad = {"x-api-key": "dps_abcdefgh_" + "y" * 40}
    statuses = [client.simulate_get(WHOAMI, headers=bad, remote_addr="198.51.100.7").status_code for _ in range(3)]
    probe = client.simulate_get(WHOAMI, headers=bad, remote_addr="198.51.100.7")
    assert statuses == [401] * 3 and probe.status_code == 429  # past the budget, probing tells nothing
    assert probe.json["code"] == "rate_limited" and "without a valid API key" in probe.json["detail"]
    assert int(probe.headers["Retry-After"]) >= 1 and budget(probe)[:4] == ("anonymous", 3, 60, 0)
    # the reference page and the document have their own budget: failed keys do not lock the address out
    for path in ("/external/v1/openapi.json", "/external/v1/docs", "/external/v1/docs/assets/swagger-ui.css"):
        docs = client.simulate_get(path, remote_addr="198.51.100.7")
        assert docs.status_code == 200 and docs.headers["RateLimit-Policy"].startswith('"documentation"'), path
    # a valid key from that address is its organization's business, and another address has its own budget
    assert client.simulate_get(WHOAMI, headers=org.viewer.headers, remote_addr="198.51.100.7").status_code == 200
    assert client.simulate_get(WHOAMI, headers=bad, remote_addr="198.51.100.8").status_code == 401


def test_two_app_instances_share_one_budget(dps_service, database_url, redis, prefix, tx, org):
    settings = limited(database_url, REDIS_URL=redis, RATE_LIMIT_KEY_PREFIX=prefix, RATE_LIMIT_ORGANIZATION="40/minute")
    clients = [falcon.testing.TestClient(dps_service.create_app(settings, tx=tx)) for _ in range(2)]

    # in turn (the test's one database transaction is not for threads; the counters' concurrency across
    # processes is in libs/common's test_rate_limit_redis and the contract suite)
    statuses = [clients[n % 2].simulate_get(WHOAMI, headers=org.viewer.headers).status_code for n in range(100)]
    assert statuses == [200] * 40 + [429] * 60


def test_an_unreachable_redis_fails_open_with_a_metric_and_a_log_line(dps_service, database_url, tx, org, caplog):
    settings = limited(database_url, REDIS_URL=closed_port_url(), RATE_LIMIT_ORGANIZATION="2/minute")
    client = falcon.testing.TestClient(dps_service.create_app(settings, tx=tx))
    unchecked = _unchecked()
    caplog.set_level(logging.INFO, logger="dps.ratelimit")
    answers = [client.simulate_get(WHOAMI, headers=org.viewer.headers) for _ in range(10)]
    assert [a.status_code for a in answers] == [200] * 10  # over the quota of 2, all served
    assert all(budget(a)[:4] == ("organization", 2, 60, 2) for a in answers)  # nothing counted: the whole quota
    assert _unchecked() - unchecked == 10
    lines = [r for r in caplog.records if r.getMessage().startswith("rate-limit store unavailable")]
    assert len(lines) == 1  # not one per request


def test_limits_can_be_off(dps_service, database_url, tx, org):
    settings = limited(database_url, RATE_LIMIT_ORGANIZATION="off", RATE_LIMIT_ANONYMOUS="off")
    client = falcon.testing.TestClient(dps_service.create_app(settings, tx=tx))
    resp = client.simulate_get(WHOAMI, headers=org.viewer.headers)
    assert resp.status_code == 200 and "RateLimit" not in resp.headers


def test_the_default_settings_count_per_process_and_say_so(dps_service, database_url, tx, caplog):
    settings = limited(database_url)
    assert settings.rate_limits == settings.rate_limits.model_copy(update={"storage_url": "memory://"})
    assert (settings.rate_limits.organization, settings.rate_limits.anonymous) == ("100/second", "60/minute")
    caplog.set_level(logging.INFO, logger="dps.ratelimit")
    dps_service.create_app(settings, tx=tx)
    assert any("no REDIS_URL" in r.getMessage() for r in caplog.records)


def test_rate_limit_settings_are_validated_at_start(database_url):
    with pytest.raises(ValueError, match="RATE_LIMIT_ORGANIZATION"):
        limited(database_url, RATE_LIMIT_ORGANIZATION="fast")


def _unchecked() -> float:
    return sum(s.value for family in DECISIONS.collect() for s in family.samples
               if s.name.endswith("_total") and s.labels.get("service") == "api" and s.labels.get("outcome") == "unchecked")
