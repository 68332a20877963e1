"""``DPS_REPLICAS=2``: make run's runner (``dealpricing-dev``, its stable entry point) starting two of every
service process on the databases it is given (the test's own PostgreSQL), the machine's RabbitMQ and Redis (a fresh virtual host,
a key prefix of its own), with a billing platform stand-in of the test's own given as the "real" app, so
that the test can read what the platform received. What the runner started is found among its own
children (``DPS_REPLICA`` names the replica); a SIGKILL goes to one process and its children, by pid,
as a pod dies whole (make run's supervisor starts it again after a second, as the cluster would)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import requests
from scale_stack import BIN, PEPPER, wait_for

from dps_testing.processes import free_port

PORTS = ("PORT", "API_PORT", "WEBHOOKS_PORT", "BILLING_PORT", "CONSOLE_PORT", "MAILBOX_PORT", "SMTP_PORT")
BEHIND = {"api": "API_PORT", "dispatcher": "WEBHOOKS_PORT", "connector": "BILLING_PORT", "console": "CONSOLE_PORT"}
# what each kind of process runs (its command line), and the relays by the service they publish for
KINDS = {
    "dps_api.wsgi": "api", "dps_webhooks.wsgi": "dispatcher", "dps_billing.wsgi": "connector",
    "dps_console.wsgi": "console", "dealpricing-webhooks worker": "webhook worker",
    "dealpricing-billing worker": "billing worker", "dealpricing-console worker": "console mail worker",
}
RELAYS = {"billing-connector": "billing relay"}  # SERVICE_NAME -> kind; the api's relay has no SERVICE_NAME
EVERY_KIND = (*KINDS.values(), "api relay", "billing relay")
READY_SECONDS = 240  # migrations of four services and 28 processes on a shared 2-core machine
BILLING_APP = {"BILLING_CLIENT_ID": "ca_scale_pairs_app", "BILLING_SECRET_KEY": "sk_test_scale_pairs_app",
               "BILLING_WEBHOOK_SECRET": "whsec_scale_pairs_0123456789abcdef"}


@dataclass
class ReplicatedRun:
    runner: subprocess.Popen[bytes]
    env: dict[str, str]
    log: Path
    killed: list[int] = field(default_factory=list)

    @property
    def origin(self) -> str:
        """The one address (the proxy)."""
        return f"http://127.0.0.1:{self.env['PORT']}"

    def replicas(self, service: str) -> list[str]:
        """Each replica's own origin (``service``: api, dispatcher, connector, console)."""
        return [f"http://127.0.0.1:{self.env[f'{BEHIND[service]}_{r}']}" for r in (1, 2)]

    @property
    def mailbox(self) -> str:
        return f"http://127.0.0.1:{self.env['MAILBOX_PORT']}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def processes(self) -> dict[str, dict[str, psutil.Process]]:
        """kind -> replica ("1", "2") -> the process the runner started (a gunicorn master, a worker)."""
        found: dict[str, dict[str, psutil.Process]] = {}
        for child in psutil.Process(self.runner.pid).children():
            try:
                command, environ = " ".join(child.cmdline()), child.environ()
            except psutil.Error:
                continue
            kind = next((k for marker, k in KINDS.items() if marker in command), None)
            if kind is None and "dps-outbox-relay" in command:
                kind = RELAYS.get(environ.get("SERVICE_NAME", ""), "api relay")
            if kind and "DPS_REPLICA" in environ and child.status() != psutil.STATUS_ZOMBIE:
                found.setdefault(kind, {})[environ["DPS_REPLICA"]] = child
        return found

    def kill(self, process: psutil.Process) -> None:
        """SIGKILL to the process and its children (a gunicorn master and its workers), as a pod dies."""
        victims = [process, *process.children(recursive=True)]
        for victim in victims:
            self.killed.append(victim.pid)
            victim.send_signal(signal.SIGKILL)

    def log_lines(self, pattern: str) -> list[str]:
        return [line for line in self.output().splitlines() if re.search(pattern, line)]


def runner_env(run_dir: Path, databases: dict[str, str], amqp_url: str, **extra: str) -> dict[str, str]:
    """The runner's environment; the billing platform's URLs (``stand_in_urls``) are added once the
    stand-in, which must know the one address's callback, is started."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("DATABASE_URL", "AMQP_URL", "REDIS_URL", "MAKEFLAGS", "MAKELEVEL")}
    return {
        **env,
        "DPS_RUN_DIR": str(run_dir),
        "DPS_REPLICAS": "2",
        "WEB_CONCURRENCY": "1",  # a server is a gunicorn master and one worker: two servers, two workers
        **{name: str(free_port()) for name in PORTS},
        **{f"{port}_{r}": str(free_port()) for port in BEHIND.values() for r in (1, 2)},
        "DATABASE_URL": databases["api"],
        "WEBHOOKS_DATABASE_URL": databases["webhooks"],
        "BILLING_DATABASE_URL": databases["billing"],
        "CONSOLE_DATABASE_URL": databases["console"],
        "AMQP_URL": amqp_url,
        "API_KEY_PEPPER": PEPPER,
        **BILLING_APP,
        "LOG_LEVEL": "INFO",
        **extra,
    }


def stand_in_urls(api_url: str, marketplace_url: str) -> dict[str, str]:
    return {"BILLING_API_URL": api_url, "BILLING_MARKETPLACE_URL": marketplace_url, "BILLING_DASHBOARD_URL": api_url,
            "BILLING_RETURN_URL": api_url + "/"}


@contextmanager
def replicated_run(env: dict[str, str], log: Path) -> Iterator[ReplicatedRun]:
    """``dealpricing-dev`` with ``env``; yields once the banner is out (every process answered)."""
    with open(log, "wb") as out:
        runner = subprocess.Popen([str(BIN / "dealpricing-dev")], env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
    run = ReplicatedRun(runner, env, log)
    descendants: list[psutil.Process] = []
    try:
        def banner() -> bool:
            assert runner.poll() is None, f"the runner exited with {runner.returncode}:\n{run.output()[-4000:]}"
            return "Deal Pricing Service is up" in run.output()

        wait_for(banner, "make run's banner with DPS_REPLICAS=2", timeout=READY_SECONDS, every=0.5)
        yield run
    finally:
        try:
            descendants = psutil.Process(runner.pid).children(recursive=True)
        except psutil.Error:
            pass
        runner.send_signal(signal.SIGTERM)  # the runner stops what it started
        try:
            runner.wait(timeout=60)
        except subprocess.TimeoutExpired:
            runner.kill()
            runner.wait(timeout=10)
        for process in descendants:  # only what a runner that failed to stop left, by pid
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    process.kill()
            except psutil.Error:
                pass


def plain() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    return session


def until_ok(send: Callable[[], requests.Response], *, seconds: float = 60) -> requests.Response:
    """A client that honours ``429`` (its ``Retry-After``: nothing was done) until its answer."""
    deadline = time.monotonic() + seconds
    while True:
        answer = send()
        if answer.status_code != 429 or time.monotonic() > deadline:
            return answer
        time.sleep(float(answer.headers.get("Retry-After", "1")))
