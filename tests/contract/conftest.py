"""The contract suite's stack: a fresh migrated PostgreSQL database, the api served over HTTPS by
real gunicorn worker processes, and organizations, users and keys made through the admin command
line, as an operator would. Tests then speak HTTP only."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
import trustme

from dps_common.testing.services import fresh_database

from dps_api.db.migrate import upgrade

from contract_client import Api, Member, Org
from contract_provisioning import Admin

PEPPER = "contract-pepper-0123456789abcdef0123456789abcdef"
CURSOR_SECRET = "contract-cursor-secret-0123456789abcdef012345"
READY_DEADLINE_SECONDS = 60


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
    folder = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    files = {"ca": folder / "ca.pem", "cert": folder / "server.pem", "key": folder / "server.key"}
    ca.cert_pem.write_to_path(str(files["ca"]))
    cert.private_key_pem.write_to_path(str(files["key"]))
    for i, pem in enumerate(cert.cert_chain_pems):
        pem.write_to_path(str(files["cert"]), append=i > 0)
    return {name: str(path) for name, path in files.items()}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@pytest.fixture(scope="session")
def server(server_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The api under gunicorn with its production settings, 2 workers, TLS; yields its origin
    ``https://127.0.0.1:<port>``."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    command = [
        sys.executable, "-m", "gunicorn", "dps_api.wsgi:create()",
        "--config", "python:dps_api.gunicorn_conf",  # the production settings (gthread workers, keep-alive)
        "--bind", f"127.0.0.1:{port}",
        "--workers", "2",
        "--certfile", tls_files["cert"],
        "--keyfile", tls_files["key"],
        "--graceful-timeout", "5",
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=server_env, stdout=log, stderr=subprocess.STDOUT)
    origin = f"https://127.0.0.1:{port}"
    try:
        _wait_ready(process, origin, tls_files["ca"], log_path)
        yield origin
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen, origin: str, ca_file: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_DEADLINE_SECONDS
    last_error = "no answer yet"
    probe = requests.Session()
    probe.trust_env = False  # no proxy in the way of 127.0.0.1
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"gunicorn exited with {process.returncode}:\n{log_path.read_text()[-4000:]}", pytrace=False)
        try:
            resp = probe.get(origin + "/readyz", verify=ca_file, timeout=2)
            if resp.status_code == 200:
                return
            last_error = f"/readyz answered {resp.status_code}: {resp.text[:200]}"
        except requests.RequestException as exc:
            last_error = str(exc)
        time.sleep(0.2)
    pytest.fail(f"gunicorn not ready after {READY_DEADLINE_SECONDS}s ({last_error}):\n{log_path.read_text()[-4000:]}", pytrace=False)


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
