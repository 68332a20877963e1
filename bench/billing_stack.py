"""The billing push bench's system: a fresh database with the connector's migrations, the api's internal
contract (the connector tests' fake api: key introspection and quote snapshots), the billing platform
stand-in (in this process, so that its request records can be read), the connector's HTTP side under
gunicorn, and ``dealpricing-billing worker`` processes.

Everything is entered on one ``ExitStack``: processes run in their own process groups and are stopped
(SIGTERM, then SIGKILL) and the database dropped, whatever happens.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import requests

from dps_common.crypto import new_key

from dps_billing.db.migrate import upgrade
from dps_billing.domain.quote_snapshot import QuoteSnapshot
from dps_billing_stand_in import BillingStandIn

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "services" / "billing-connector" / "tests"))  # the connector tests' helpers

from databases import fresh_database  # noqa: E402

from dps_testing.fake_api import FakeApi, FakeOrg  # noqa: E402

from billing_helpers import connect, line, quote  # noqa: E402

BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SECRET_KEY = "sk_test_dps_bench_billing"
CLIENT_ID = "ca_dps_bench_billing"
WEBHOOK_SECRET = "whsec_dps_bench_billing_0123456789"
CALLBACK_PATH = "/external/v1/billing-connection/callback"


class Process:
    """A child in its own process group, logging to a file; ``stop`` ends the whole group."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log_dir: Path):
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(command, env={**os.environ, **env}, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}; log tail:\n{tail}")

    def cpu_seconds(self) -> float:
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def settle(self, window: float = 0.5, quiet_cpu: float = 0.02, timeout: float = 30) -> None:
        """Wait until start-up is over (imports and connecting cost about a second of CPU, which must
        not land in a measurement): a ``window`` in which the process used under ``quiet_cpu`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            before = self.cpu_seconds()
            time.sleep(window)
            if self.cpu_seconds() - before < quiet_cpu:
                return
        raise RuntimeError(f"{self.name} still busy {timeout:.0f} s after it started")

    def stop(self, timeout: float = 15) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout)
            except ProcessLookupError:
                pass
        self._log.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    database_url: str
    log_dir: Path
    fake_api: FakeApi
    stand_in: BillingStandIn
    connector_url: str
    org: FakeOrg
    account: str  # the connected billing account
    worker_env: dict[str, str]

    def start_workers(self, stack: ExitStack, count: int) -> list[Process]:
        workers = []
        for n in range(count):
            worker = Process(f"worker-{len(list(self.log_dir.glob('worker-*.log'))) + 1}",
                             [str(BIN / "dealpricing-billing"), "worker"], self.worker_env, self.log_dir)
            stack.callback(worker.stop)
            workers.append(worker)
        for worker in workers:
            worker.settle()
        return workers

    def quote(self, lines: int, name: str) -> QuoteSnapshot:
        """An approved quote of ``lines`` monthly per-unit lines (every one pushed: a product and a
        price each), served by the fake api."""
        snapshot = quote(self.org.id, self.org.user.user_id, [
            line(n, unit_amount=str(Decimal(100 + n)), quantity=str(1 + n % 3), name=f"Bench product {n}",
                 spec_id=f"SPEC-{n:04d}")
            for n in range(1, lines + 1)
        ], name=name)
        self.fake_api.put_quote(snapshot)
        return snapshot

    def request_push(self, snapshot: QuoteSnapshot) -> str:
        answer = requests.post(f"{self.connector_url}/external/v1/pricing-quotes/{snapshot.id}/billing-pushes",
                               headers={"x-api-key": self.org.admin.key}, timeout=10)
        if answer.status_code != 202:
            raise RuntimeError(f"push request answered {answer.status_code}: {answer.text}")
        return str(answer.json()["id"])

    def read_push(self, snapshot: QuoteSnapshot, push_id: str) -> dict[str, object]:
        answer = requests.get(f"{self.connector_url}/external/v1/pricing-quotes/{snapshot.id}/billing-pushes/{push_id}",
                              headers={"x-api-key": self.org.admin.key}, timeout=10)
        answer.raise_for_status()
        push: dict[str, object] = answer.json()
        return push


def build(stack: ExitStack, server_url: str, rate_per_second: float, limit_per_second: int,
          latency_seconds: float) -> Stack:
    log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dps-bench-billing-")))
    database_url = stack.enter_context(fresh_database(server_url, "dps_bench_billing"))
    upgrade(database_url)
    internal_token = secrets.token_urlsafe(32)
    fake_api = FakeApi(internal_token)
    stack.callback(fake_api.stop)
    port = free_port()
    connector_url = f"http://{HOST}:{port}"
    stand_in = BillingStandIn.start(secret_key=SECRET_KEY, client_id=CLIENT_ID,
                                    redirect_uris=[connector_url + CALLBACK_PATH], webhook_secret=WEBHOOK_SECRET,
                                    rate_limit_per_second=limit_per_second)
    stack.callback(stand_in.stop)
    stand_in.faults.latency(latency_seconds, path_prefix="/v1/")
    env = {
        "DATABASE_URL": database_url,
        "API_URL": fake_api.url,
        "INTERNAL_API_TOKEN": internal_token,
        "CURSOR_SECRET": secrets.token_hex(32),
        "BILLING_SECRET_KEY": SECRET_KEY,
        "BILLING_CLIENT_ID": CLIENT_ID,
        "BILLING_API_URL": stand_in.api_url,
        "BILLING_MARKETPLACE_URL": stand_in.marketplace_url,
        "BILLING_DASHBOARD_URL": stand_in.dashboard_url,
        "BILLING_REDIRECT_URI": connector_url + CALLBACK_PATH,
        "BILLING_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "BILLING_TOKEN_KEY": new_key(),
        "BILLING_STATE_SECRET": secrets.token_hex(32),
        "BILLING_RATE_PER_SECOND": f"{rate_per_second:g}",
        "PYTHONUNBUFFERED": "1",
    }
    server = Process("connector", [
        str(BIN / "gunicorn"), "-c", "python:dps_common.gunicorn_conf", "dps_billing.wsgi:create()",
    ], {**env, "HOST": HOST, "PORT": str(port), "WEB_CONCURRENCY": "1", "LOG_LEVEL": "WARNING"}, log_dir)
    stack.callback(server.stop)
    _wait_until_up(server, connector_url + "/external/v1/openapi.json")
    org = fake_api.organization()
    connect(connector_url, org.admin.key, stand_in.install())  # the real callback: token exchange, sealed tokens
    (account,) = stand_in.installed_accounts()
    # INFO: the workers' "push claimed" lines say which worker took which push.
    return Stack(database_url, log_dir, fake_api, stand_in, connector_url, org, account, {**env, "LOG_LEVEL": "INFO"})


def _wait_until_up(server: Process, url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server.check_alive()
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or its worker still booting
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the connector did not answer {url} within {timeout:.0f} s")
