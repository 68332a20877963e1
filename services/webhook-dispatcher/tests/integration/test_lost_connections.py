"""The dispatcher's database connections ended again and again for 3 s, three times, while clients read
its endpoints (the dispatcher under gunicorn, two workers, TLS; the real api checks the keys): no
answer is a 500; in the gap each is 2xx or 503 problem+json with Retry-After; once the kills stop,
every answer is 2xx again (no stale pooled connection fails later)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import requests

from dps_testing.connection_kills import rides_out_ended_connections
from dps_testing.processes import gunicorn
from dps_testing.provisioning import Org
from dps_testing.real_api import api_server

API = "/external/v1"
APPLICATION_NAME = "dps-webhooks-http"  # the dispatcher's HTTP workers' connections (composition.build_http)


@pytest.fixture(scope="module")
def api_origin(api_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("lost-conn-api") / "api.log"
    with api_server({**api_env, "KEY_CACHE_TTL_SECONDS": "60"}, tls_files, log) as origin:
        yield origin


@pytest.fixture(scope="module")
def dispatcher(settings_env: dict[str, str], api_origin: str, tls_files: dict[str, str],
               tmp_path_factory) -> Iterator[str]:
    env = {**os.environ, **settings_env, "API_URL": api_origin, "LOG_LEVEL": "WARNING", "DATABASE_POOL_SIZE": "2"}
    log = tmp_path_factory.mktemp("lost-conn-dispatcher") / "dispatcher.log"
    with gunicorn("dps_webhooks.wsgi:create()", env, tls_files, log, workers=2) as origin:
        yield origin


def test_ended_connections_are_never_a_500(dispatcher: str, api_org: Org, settings_env: dict[str, str],
                                           tls_files: dict[str, str]) -> None:
    ca = tls_files["ca"]
    headers = api_org.admin.headers

    made = requests.post(dispatcher + API + "/webhook-configs", headers=headers, verify=ca, timeout=30,
                         json={"url": "https://127.0.0.1:9/hooks", "eventTypes": ["quote.approved"]})
    assert made.status_code == 201, made.text
    endpoint = f"{dispatcher}{API}/webhook-configs/{made.json()['id']}"

    def read_endpoints(session: requests.Session) -> requests.Response:
        return session.get(dispatcher + API + "/webhook-configs?limit=5", headers=headers, verify=ca, timeout=30)

    def read_deliveries(session: requests.Session) -> requests.Response:
        return session.get(endpoint + "/deliveries?limit=5", headers=headers, verify=ca, timeout=30)

    rides_out_ended_connections(settings_env["DATABASE_URL"], APPLICATION_NAME,
                                {"read endpoints": read_endpoints, "read deliveries": read_deliveries})
