"""Spec section 8: the per-organization rate limit ("it exists; value and headers not shown"), against
real gunicorn servers of their own (the shared stack runs with budgets no test reaches) counting in
the machine's Redis under a key prefix of this module's: one budget per organization across two
gunicorn workers and two services (exactly for a small quota; under a concurrent flood of a larger
one, never over and short by at most what the processes' leases hold), the budget of requests
without a valid key per address, the RateLimit-Policy and RateLimit fields on every answer, 429
with Retry-After, and serving on (fail open) when Redis is unreachable."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from dps_testing.processes import gunicorn
from dps_testing.rate_limits import closed_port_url, key_prefix, redis_url

from contract_client import INVALID_KEY, Api, assert_problem

ORGANIZATION_QUOTA = 30
ANONYMOUS_QUOTA = 10
POLICY_FIELD = re.compile(r'^"(organization|anonymous)";q=(\d+);w=(\d+)$')
LIMIT_FIELD = re.compile(r'^"(organization|anonymous)";r=(\d+);t=(\d+)$')


@pytest.fixture(scope="module")
def limits_env() -> Iterator[dict[str, str]]:
    url = redis_url()
    with key_prefix(url, "dps-contract-rl") as prefix:
        yield {"REDIS_URL": url, "RATE_LIMIT_KEY_PREFIX": prefix,
               "RATE_LIMIT_ORGANIZATION": f"{ORGANIZATION_QUOTA}/minute", "RATE_LIMIT_ANONYMOUS": f"{ANONYMOUS_QUOTA}/minute"}


@pytest.fixture(scope="module")
def limited_api(server_env, limits_env, tls_files, stack_logs) -> Iterator[Api]:
    """The api under gunicorn, 2 workers, low budgets counted in Redis."""
    log_path = stack_logs.path("api (rate limits)")
    with gunicorn("dps_api.wsgi:create()", {**server_env, **limits_env}, tls_files, log_path) as origin:
        yield Api(origin, tls_files["ca"])


@pytest.fixture(scope="module")
def limited_webhooks(webhooks_env, limits_env, tls_files, stack_logs) -> Iterator[Api]:
    """The webhook dispatcher's HTTP side with the same budgets in the same Redis."""
    log_path = stack_logs.path("webhook dispatcher (rate limits)")
    with gunicorn("dps_webhooks.wsgi:create()", {**webhooks_env, **limits_env}, tls_files, log_path) as origin:
        yield Api(origin, tls_files["ca"])


FLOOD_QUOTA = 1200  # leases of up to 12 units (1 %) per process


@pytest.fixture(scope="module")
def flood_servers(server_env, webhooks_env, tls_files, stack_logs) -> Iterator[tuple[Api, Api]]:
    """The api and the dispatcher, 2 workers each, sharing a budget large enough for leases."""
    url = redis_url()
    with key_prefix(url, "dps-contract-flood") as prefix:
        env = {"REDIS_URL": url, "RATE_LIMIT_KEY_PREFIX": prefix, "RATE_LIMIT_ORGANIZATION": f"{FLOOD_QUOTA}/minute"}
        with gunicorn("dps_api.wsgi:create()", {**server_env, **env}, tls_files, stack_logs.path("api (flood)")) as api, \
                gunicorn("dps_webhooks.wsgi:create()", {**webhooks_env, **env}, tls_files, stack_logs.path("webhook dispatcher (flood)")) as hooks:
            yield Api(api, tls_files["ca"]), Api(hooks, tls_files["ca"])


def fresh(api: Api) -> Api:
    """A client on a new connection per request, so that requests spread over gunicorn's workers."""
    client = Api(api.origin, api.ca_file)
    client.headers["Connection"] = "close"
    return client


def budget(resp: requests.Response) -> tuple[str, int, int, int, int]:
    policy, limit = POLICY_FIELD.match(resp.headers["RateLimit-Policy"]), LIMIT_FIELD.match(resp.headers["RateLimit"])
    assert policy and limit, dict(resp.headers)
    assert policy.group(1) == limit.group(1)
    return policy.group(1), int(policy.group(2)), int(policy.group(3)), int(limit.group(2)), int(limit.group(3))


def test_every_answer_carries_the_budget_and_probes_are_limited_per_address(limited_api, make_org):
    org = make_org("Budget Headers Co")
    ok = limited_api.get("/whoami", org.viewer)
    assert ok.status_code == 200 and budget(ok)[:4] == ("organization", ORGANIZATION_QUOTA, 60, ORGANIZATION_QUOTA - 1)
    forbidden = limited_api.post("/products", org.viewer, json={"specId": "X", "name": "X", "priceModel": "PER_UNIT"})
    assert forbidden.status_code == 403 and budget(forbidden)[3] == ORGANIZATION_QUOTA - 2
    for path in ("/healthz", "/readyz", "/metrics"):
        probe = limited_api.get(path, absolute=True)
        assert probe.status_code == 200 and "RateLimit" not in probe.headers
    client = fresh(limited_api)
    answers = [client.get("/whoami", f"dps_probe{n:04d}_" + "s" * 43) for n in range(ANONYMOUS_QUOTA)]
    for n, resp in enumerate(answers):
        assert_problem(resp, 401)
        assert resp.json()["detail"] == INVALID_KEY
        assert budget(resp)[:4] == ("anonymous", ANONYMOUS_QUOTA, 60, ANONYMOUS_QUOTA - 1 - n)
    refused = client.get("/whoami", "dps_probe9999_" + "s" * 43)
    assert_problem(refused, 429)
    assert refused.json()["code"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1 and budget(refused)[3] == 0
    document = client.get("/openapi.json")  # the documentation has its own budget: failed keys do not spend it
    assert document.status_code == 200 and document.headers["RateLimit-Policy"].startswith('"documentation"')
    assert limited_api.get("/whoami", org.viewer).status_code == 200  # a valid key is its organization's business


def test_one_budget_per_organization_across_workers_and_services(limited_api, limited_webhooks, make_org):
    org, other = make_org("Shared Budget Co"), make_org("Other Budget Co")
    api, hooks = fresh(limited_api), fresh(limited_webhooks)
    answers = []
    for n in range(ORGANIZATION_QUOTA + 15):
        answers.append(api.get("/whoami", org.admin) if n % 2 else hooks.get("/webhook-configs", org.admin))
    statuses = [resp.status_code for resp in answers]
    assert statuses.count(200) == ORGANIZATION_QUOTA, statuses  # 2 api workers and the dispatcher, one budget
    assert statuses == [200] * ORGANIZATION_QUOTA + [429] * 15
    for resp in answers[ORGANIZATION_QUOTA:]:
        assert_problem(resp, 429)
        retry_after = int(resp.headers["Retry-After"])
        assert 1 <= retry_after <= 60 and budget(resp) == ("organization", ORGANIZATION_QUOTA, 60, 0, retry_after)
    assert limited_api.get("/whoami", other.admin).status_code == 200


def test_a_concurrent_flood_across_workers_and_services_stays_within_the_budget(flood_servers, make_org):
    org = make_org("Flood Budget Co")
    api, hooks = flood_servers

    def flood(n: int) -> list[requests.Response]:
        # keep-alive clients of their own, spread over both services and (by connection) both workers of each
        client, path = (Api(api.origin, api.ca_file), "/whoami") if n % 2 else (Api(hooks.origin, hooks.ca_file), "/webhook-configs")
        return [client.get(path, org.admin) for _ in range(200)]

    with ThreadPoolExecutor(8) as pool:
        answers = [resp for batch in pool.map(flood, range(8)) for resp in batch]
    statuses = [resp.status_code for resp in answers]
    assert set(statuses) <= {200, 429}, set(statuses)
    served = statuses.count(200)
    # never over the quota; under it by at most what 4 processes hold of their leases (12 units each, 4 %)
    assert FLOOD_QUOTA - 4 * 12 <= served <= FLOOD_QUOTA, served
    for resp in answers:
        policy, quota, window, remaining, reset = budget(resp)
        assert (policy, quota, window) == ("organization", FLOOD_QUOTA, 60) and 0 <= remaining < FLOOD_QUOTA
        if resp.status_code == 429:
            assert remaining == 0 and 1 <= int(resp.headers["Retry-After"]) == reset <= 60


def test_an_unreachable_redis_fails_open(server_env, tls_files, stack_logs, make_org):
    org = make_org("Fail Open Co")
    log_path: Path = stack_logs.path("api (redis unreachable)")
    env = {**server_env, "REDIS_URL": closed_port_url(), "RATE_LIMIT_ORGANIZATION": "3/minute", "LOG_LEVEL": "INFO"}
    with gunicorn("dps_api.wsgi:create()", env, tls_files, log_path, workers=1) as origin:
        api = Api(origin, tls_files["ca"])
        answers = [api.get("/whoami", org.viewer) for _ in range(12)]
        metrics = _samples(api.get("/metrics", absolute=True).text)
    assert [resp.status_code for resp in answers] == [200] * 12  # four times the quota, all served
    assert all(budget(resp)[:4] == ("organization", 3, 60, 3) for resp in answers)
    unchecked = 'dps_rate_limit_decisions_total{outcome="unchecked",policy="organization",service="api"}'
    assert metrics[unchecked] == 12
    lines = [line for line in log_path.read_text().splitlines() if "rate-limit store unavailable" in line]
    assert len(lines) == 1, lines  # one line, not one per request


def _samples(text: str) -> dict[str, float]:
    return {
        sample.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items())) + "}": sample.value
        for family in text_string_to_metric_families(text) for sample in family.samples
    }
