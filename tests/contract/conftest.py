"""The contract suite's stack: a fresh migrated PostgreSQL database, the api served over HTTPS by
real gunicorn worker processes, and organizations, users and keys made through the admin command
line, as an operator would. Tests then speak HTTP only."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from dps_common.testing.processes import gunicorn, write_tls_files
from dps_common.testing.provisioning import Admin, Member, Org
from dps_common.testing.services import fresh_database

from dps_api.db.migrate import upgrade

from contract_client import Api

PEPPER = "contract-pepper-0123456789abcdef0123456789abcdef"
CURSOR_SECRET = "contract-cursor-secret-0123456789abcdef012345"


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    with fresh_database("dps_contract") as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="session")
def server_env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_KEY_PEPPER": PEPPER,
        "CURSOR_SECRET": CURSOR_SECRET,
        "KEY_CACHE_TTL_SECONDS": "1",  # cross-process rotation and revocation observable quickly
        "LOG_LEVEL": "WARNING",
    }


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A throwaway CA and a server certificate for 127.0.0.1: only HTTPS is served."""
    return write_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def server(server_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The api under gunicorn with its production settings, 2 workers, TLS; yields its origin."""
    log_path = tmp_path_factory.mktemp("gunicorn") / "api.log"
    with gunicorn("dps_api.wsgi:create()", server_env, tls_files, log_path) as origin:
        yield origin


@pytest.fixture(scope="session")
def api(server: str, tls_files: dict[str, str]) -> Api:
    return Api(server, tls_files["ca"])


@pytest.fixture(scope="session")
def admin(server_env: dict[str, str]) -> Admin:
    return Admin(server_env)


@pytest.fixture(scope="session")
def make_org(admin: Admin) -> Callable[[str], Org]:
    """A new organization with an admin, a user and a view-only member, each with a key of that role."""

    def make(name: str) -> Org:
        return admin.organization(name)

    return make


@pytest.fixture(scope="session")
def org(make_org) -> Org:
    return make_org("Acme Corp")


@pytest.fixture(scope="session")
def other_org(make_org) -> Org:
    return make_org("Globex")


@pytest.fixture
def fresh_member(org: Org, request: pytest.FixtureRequest) -> Callable[[str], Member]:
    """A new member of ``org`` for tests that rotate or revoke keys (never the shared ones)."""
    counter = iter(range(1000))

    def make(role: str) -> Member:
        slug = request.node.name.replace("[", "-").replace("]", "").lower()[:40]
        return org.member(role, f"{slug}-{next(counter)}-{role.replace(' ', '')}@acme.example")

    return make
