"""The api's database connections ended again and again for 3 s, three times, while clients write and
read (gunicorn, two workers, TLS; PostgreSQL's own pg_terminate_backend on the api's connections):
no answer is a 500; in the gap each is 2xx or 503 problem+json with Retry-After; once the kills
stop, every answer is 2xx again (no stale pooled connection fails later)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import requests

from dps_testing.connection_kills import rides_out_ended_connections
from dps_testing.processes import gunicorn, write_tls_files
from dps_testing.provisioning import Admin
from dps_testing.rate_limits import UNTHROTTLED

PEPPER = "lost-conn-pepper-0123456789abcdef0123456789abcdef"
API = "/external/v1"
APPLICATION_NAME = "dps-api-http"  # the api's HTTP workers' connections (dps_api.composition)


@pytest.fixture(scope="module")
def server_env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_KEY_PEPPER": PEPPER,
        "CURSOR_SECRET": "lost-conn-cursor-0123456789abcdef0123456789",
        "LOG_LEVEL": "WARNING",
        "DATABASE_POOL_SIZE": "2",
        **UNTHROTTLED,
    }


@pytest.fixture(scope="module")
def served(server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tls = write_tls_files(tmp_path_factory.mktemp("lost-conn-tls"))
    with gunicorn("dps_api.wsgi:create()", server_env, tls, tmp_path_factory.mktemp("lost-conn") / "api.log",
                  workers=2) as origin:
        yield origin, tls["ca"]


def test_ended_connections_are_never_a_500(served: tuple[str, str], server_env: dict[str, str]) -> None:
    origin, ca = served
    admin = Admin(server_env)
    headers = admin.member(admin.create_org("Lost Connections Co")["id"], "admin", "admin@lost-conn.example").headers

    def write(session: requests.Session) -> requests.Response:
        body = {"name": f"Opportunity {uuid.uuid4().hex[:8]}", "accountName": "Initech"}
        return session.post(origin + API + "/opportunities", json=body, headers=headers, verify=ca, timeout=30)

    def read(session: requests.Session) -> requests.Response:
        return session.get(origin + API + "/opportunities?limit=5", headers=headers, verify=ca, timeout=30)

    def read_products(session: requests.Session) -> requests.Response:  # a driver cursor's read
        return session.get(origin + API + "/products?limit=5", headers=headers, verify=ca, timeout=30)

    rides_out_ended_connections(server_env["DATABASE_URL"], APPLICATION_NAME,
                                {"write": write, "read": read, "read products": read_products})
