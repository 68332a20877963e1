"""The contract suite's stack: a fresh migrated PostgreSQL database, the api served over HTTPS by
real gunicorn worker processes, and organizations, users and keys made through the admin command
line, as an operator would. Tests then speak HTTP only.

The webhook tests add, lazily (only they ask for ``webhooks``): a RabbitMQ virtual host, the api's
outbox relay, the webhook dispatcher under gunicorn on its own database, its delivery worker, and
a real HTTPS receiver on loopback. Retry gaps are compressed to fractions of a second and the
attempt timeout to seconds; every count (8 attempts, 20 failures before auto-disable, page sizes) is
the spec's.

The billing tests add, lazily (only they ask for ``billing``): the billing platform stand-in, the
billing connector under gunicorn over HTTPS on its own database (migrated by its command line), its
push worker and its outbox relay. The connector reads quotes and checks keys through the api.

Every process of the stack writes its output to a file of the session's ``stack_logs`` folder (the
stand-in and the receiver, which run in this process, their log records), at the services' default
level, INFO; every secret the suite is shown is gathered in ``issued_secrets``. The secrets scan
(``test_s2_secrets_at_rest``) runs after every other test of the suite and searches the stack's
tables and every line of those files for all of them.

Under pytest-xdist the whole suite is one group (``dps_testing.grouping``, ``--dist loadgroup``): one
worker runs every contract module, so the stack is built once per run; run with ``--dist loadscope``
instead, each worker would build a stack of its own (databases, virtual host, processes on free
ports)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from contract_billing import (
    CALLBACK_PATH,
    CLIENT_ID,
    PLATFORM_WEBHOOKS_PATH,
    SECRET_KEY,
    WEBHOOK_SECRET,
    Billing,
    DocumentedApi,
)
from kombu.connection import Connection

from dps_common.crypto import new_key
from dps_testing.issued_secrets import IssuedSecrets
from dps_testing.processes import bound_listener, gunicorn, stop, write_tls_files
from dps_testing.provisioning import Admin, Member, Org
from dps_testing.rate_limits import UNTHROTTLED
from dps_testing.services import fresh_database, fresh_vhost
from dps_testing.stack_logs import StackLogs
from dps_testing.webhook_receiver import Receiver

from dps_api.db.migrate import upgrade
from dps_billing_stand_in import BillingStandIn
from dps_webhooks.db.migrate import upgrade as upgrade_webhooks

from contract_client import ISSUED, Api
from contract_webhooks import RETRY_GAPS, Webhooks

PEPPER = "contract-pepper-0123456789abcdef0123456789abcdef"
CURSOR_SECRET = "contract-cursor-secret-0123456789abcdef012345"
INTERNAL_API_TOKEN = "contract-internal-token-0123456789abcdef0123"
CONSOLE_API_TOKEN = "contract-console-token-0123456789abcdef01234"  # the settings console's, for /api-keys
EVENTS_EXCHANGE = "dps.events"
EVENTS_QUEUE = "webhook-dispatcher.events"
# The dispatcher's attempt deadline, compressed like the retry gaps (the spec's 10 s is checked by the
# dispatcher's own tests): long enough for a test to read a record while an attempt hangs.
ATTEMPT_TIMEOUT_SECONDS = 4
BIN = Path(sys.executable).parent
# The stack (three services, two gunicorn workers each, relays, workers) runs beside the other suites, all on one PostgreSQL server of 100 connections: small pools per process.
FEW_CONNECTIONS = {"DB_POOL_SIZE": "2"}
# What the processes log: the services' default level (every request's line), each line written at once.
LOGGING = {"LOG_LEVEL": "INFO", "PYTHONUNBUFFERED": "1"}
SCANNED_LAST = "test_s2_secrets_at_rest.py"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The secrets scan after every other test (a stable sort: the rest keep their order, and under
    ``--dist loadgroup`` a group's tests run in collection order): it searches for every secret the
    run was shown, in every log line written until then."""
    items.sort(key=lambda item: item.path.name == SCANNED_LAST and item.path.parent.name == "contract")


@pytest.fixture(scope="session")
def stack_logs(tmp_path_factory: pytest.TempPathFactory) -> StackLogs:
    """One file per process of the stack (its stdout and stderr), all in one folder."""
    return StackLogs(tmp_path_factory.mktemp("stack-logs"))


@pytest.fixture(scope="session")
def issued_secrets() -> IssuedSecrets:
    """Every secret the suite was shown: the clients' answers (``contract_client.ISSUED``) and the
    admin command line's keys."""
    return ISSUED


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    with fresh_database("dps_contract") as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="session")
def amqp_url() -> Iterator[str]:
    """A fresh virtual host: the suite's events never meet another run's."""
    with fresh_vhost("dps_contract") as url:
        yield url


@pytest.fixture(scope="session")
def server_env(database_url: str, amqp_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_KEY_PEPPER": PEPPER,
        "CURSOR_SECRET": CURSOR_SECRET,
        "KEY_CACHE_TTL_SECONDS": "1",  # cross-process rotation and revocation observable quickly
        **LOGGING,
        "INTERNAL_API_TOKEN": INTERNAL_API_TOKEN,  # the dispatcher checks keys through the api
        "CONSOLE_API_TOKEN": CONSOLE_API_TOKEN,  # console credentials (sign-in) for /api-keys
        "AMQP_URL": amqp_url,
        "EVENTS_EXCHANGE": EVENTS_EXCHANGE,
        **UNTHROTTLED,  # the suite makes many requests per organization; budgets: test_s8_rate_limits
        **FEW_CONNECTIONS,
    }


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A throwaway CA and a server certificate for 127.0.0.1: only HTTPS is served."""
    return write_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def server(server_env: dict[str, str], tls_files: dict[str, str], stack_logs: StackLogs) -> Iterator[str]:
    """The api under gunicorn with its production settings, 2 workers, TLS; yields its origin."""
    with gunicorn("dps_api.wsgi:create()", server_env, tls_files, stack_logs.path("api")) as origin:
        yield origin


@pytest.fixture(scope="session")
def api(server: str, tls_files: dict[str, str]) -> Api:
    return Api(server, tls_files["ca"])


@pytest.fixture(scope="session")
def admin(server_env: dict[str, str], issued_secrets: IssuedSecrets) -> Admin:
    return Admin(server_env, issued_secrets)


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


# --- the webhook stack (started only when a webhook test asks for it) ---------------------------


@contextmanager
def _process(command: list[str], env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen]:
    """A long-running command with its output in ``log_path``; SIGTERM (then SIGKILL) at the end."""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        stop(process)


@pytest.fixture(scope="session")
def webhooks_database_url() -> Iterator[str]:
    with fresh_database("dps_contract_wh") as url:
        upgrade_webhooks(url)
        yield url


@pytest.fixture(scope="session")
def webhooks_env(
    webhooks_database_url: str, server: str, amqp_url: str, tls_files: dict[str, str]
) -> dict[str, str]:
    """The dispatcher's environment (HTTP side and worker): the receiver on loopback is allowed and
    trusted, and the eight attempts' gaps are compressed to fractions of a second."""
    return {
        **os.environ,
        "DATABASE_URL": webhooks_database_url,
        "CURSOR_SECRET": CURSOR_SECRET,
        "WEBHOOK_SECRET_KEY": new_key(),
        "API_URL": server,
        "API_CA_FILE": tls_files["ca"],
        "INTERNAL_API_TOKEN": INTERNAL_API_TOKEN,
        "AMQP_URL": amqp_url,
        "EVENTS_EXCHANGE": EVENTS_EXCHANGE,
        "EVENTS_QUEUE": EVENTS_QUEUE,
        "KEY_CACHE_TTL_SECONDS": "1",
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",  # off by default; the test receiver is on loopback
        "WEBHOOK_RECEIVER_CA_FILE": tls_files["ca"],
        "WEBHOOK_RETRY_GAPS_SECONDS": ",".join(str(gap) for gap in RETRY_GAPS),
        "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": str(ATTEMPT_TIMEOUT_SECONDS),
        "WEBHOOK_POLL_INTERVAL_SECONDS": "0.2",
        **LOGGING,
        **UNTHROTTLED,
        **FEW_CONNECTIONS,
    }


@pytest.fixture(scope="session")
def webhooks_server(webhooks_env: dict[str, str], tls_files: dict[str, str], stack_logs: StackLogs) -> Iterator[str]:
    """The dispatcher's HTTP side under gunicorn over TLS; yields its origin."""
    with gunicorn("dps_webhooks.wsgi:create()", webhooks_env, tls_files, stack_logs.path("webhook dispatcher")) as origin:
        yield origin


@pytest.fixture(scope="session")
def outbox_relay(server_env: dict[str, str], stack_logs: StackLogs) -> Iterator[subprocess.Popen]:
    """The api's outbox relay: publishes every committed api change to the events exchange."""
    with _process([str(BIN / "dealpricing-outbox-relay")], server_env, stack_logs.path("api outbox relay")) as process:
        yield process


@pytest.fixture(scope="session")
def webhook_worker(webhooks_env: dict[str, str], stack_logs: StackLogs) -> Iterator[subprocess.Popen]:
    """The dispatcher's worker: consumes the events and delivers them."""
    log_path = stack_logs.path("webhook worker")
    with _process([str(BIN / "dealpricing-webhooks"), "worker"], webhooks_env, log_path) as process:
        yield process


@pytest.fixture(scope="session")
def webhook_receiver(tls_files: dict[str, str], stack_logs: StackLogs) -> Iterator[Receiver]:
    """A real HTTPS receiver on 127.0.0.1 with the suite's certificate; records every request (the
    tests verify signatures themselves, with each endpoint's secret) and logs each one."""
    with stack_logs.capture("webhook receiver", "dps_testing.webhook_receiver"), Receiver(tls_files) as receiver:
        yield receiver


@pytest.fixture(scope="session")
def webhook_api(
    webhooks_server: str, webhook_receiver: Receiver, api: Api, tls_files: dict[str, str]
) -> Webhooks:
    """The dispatcher's HTTP API and the receiver, for the tests of records alone (nothing is
    delivered unless a test also asks for ``webhooks``)."""
    return Webhooks(Api(webhooks_server, tls_files["ca"]), api, webhook_receiver)


@pytest.fixture(scope="session")
def webhooks(
    outbox_relay: subprocess.Popen,
    webhook_worker: subprocess.Popen,
    webhook_api: Webhooks,
    make_org: Callable[[str], Org],
    amqp_url: str,
) -> Webhooks:
    """The whole event path, proven working end to end once (an api change reaches the receiver)
    before any webhook test runs. The relay and the worker are asked for first, so they start
    while the dispatcher's gunicorn does."""
    webhook_api.watch(outbox_relay, webhook_worker)
    canary = make_org("Webhook Canary")
    _wait_for_queue(amqp_url, EVENTS_QUEUE, webhook_api)
    webhook_api.wait_until_flowing(canary)
    return webhook_api


def _wait_for_queue(amqp_url: str, queue: str, webhooks: Webhooks, timeout: float = 60) -> None:
    """Until the worker has declared its queue: an event published before that is dropped by the
    broker (no queue bound yet), and the canary would wait for it in vain."""
    deadline = time.monotonic() + timeout
    with Connection(amqp_url, connect_timeout=5) as connection:
        while True:
            webhooks.check_processes()
            try:
                with connection.channel() as channel:
                    channel.queue_declare(queue=queue, passive=True)
                return
            except connection.channel_errors:  # 404: not declared yet (the channel is closed)
                if time.monotonic() > deadline:
                    pytest.fail(f"the worker declared no queue {queue!r} within {timeout:.0f}s", pytrace=False)
                time.sleep(0.1)


# --- the billing stack (started only when a billing test asks for it) ---------------------------


@pytest.fixture(scope="session")
def billing_database_url(server_env: dict[str, str], stack_logs: StackLogs) -> Iterator[str]:
    """The connector's own database, migrated as an operator does: ``dealpricing-billing migrate``."""
    with fresh_database("dps_contract_bc") as url:
        done = subprocess.run([str(BIN / "dealpricing-billing"), "migrate"], env={**server_env, "DATABASE_URL": url},
                              capture_output=True, text=True, timeout=120)
        stack_logs.path("billing migrate").write_text(done.stdout + done.stderr)
        assert done.returncode == 0, f"dealpricing-billing migrate -> {done.returncode}: {done.stderr}"
        yield url


@pytest.fixture(scope="session")
def billing_listener() -> Iterator:
    """The connector's socket, bound first: the platform must know the callback URL before the
    connector starts, and the connector its own callback URL."""
    listener = bound_listener()
    yield listener
    listener.close()  # gunicorn's copy outlives this one


@pytest.fixture(scope="session")
def billing_origin(billing_listener) -> str:
    return f"https://127.0.0.1:{billing_listener.getsockname()[1]}"


@pytest.fixture(scope="session")
def billing_stand_in(billing_origin: str, tls_files: dict[str, str], stack_logs: StackLogs) -> Iterator[BillingStandIn]:
    """The billing platform: the connector's callback is its registered redirect URI, and it signs
    its app events to the connector's webhook endpoint (HTTPS, the suite's CA). It logs each request
    (werkzeug's lines), as under ``make run``."""
    with stack_logs.capture("billing platform stand-in", "werkzeug", "dps_billing_stand_in"), BillingStandIn.start(
        secret_key=SECRET_KEY,
        client_id=CLIENT_ID,
        redirect_uris=[billing_origin + CALLBACK_PATH],
        webhook_url=billing_origin + PLATFORM_WEBHOOKS_PATH,
        webhook_secret=WEBHOOK_SECRET,
        webhook_verify=tls_files["ca"],
        log_requests=True,
    ) as stand_in:
        yield stand_in


@pytest.fixture(scope="session")
def billing_env(
    billing_database_url: str, billing_origin: str, billing_stand_in: BillingStandIn, server: str,
    amqp_url: str, tls_files: dict[str, str],
) -> dict[str, str]:
    """The connector's environment (HTTP side, worker and relay), production defaults otherwise."""
    return {
        **os.environ,
        "DATABASE_URL": billing_database_url,
        "API_URL": server,
        "API_CA_FILE": tls_files["ca"],
        "INTERNAL_API_TOKEN": INTERNAL_API_TOKEN,
        "CURSOR_SECRET": CURSOR_SECRET,
        "BILLING_SECRET_KEY": SECRET_KEY,
        "BILLING_CLIENT_ID": CLIENT_ID,
        "BILLING_REDIRECT_URI": billing_origin + CALLBACK_PATH,
        "BILLING_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "BILLING_TOKEN_KEY": new_key(),
        "BILLING_STATE_SECRET": "contract-billing-state-secret-0123456789abcdef",
        "BILLING_API_URL": billing_stand_in.api_url,
        "BILLING_MARKETPLACE_URL": billing_stand_in.marketplace_url,
        "BILLING_DASHBOARD_URL": billing_stand_in.dashboard_url,
        "KEY_CACHE_TTL_SECONDS": "1",
        "AMQP_URL": amqp_url,
        "EVENTS_EXCHANGE": EVENTS_EXCHANGE,
        **LOGGING,
        **UNTHROTTLED,
        **FEW_CONNECTIONS,
    }


@pytest.fixture(scope="session")
def billing_server(
    billing_env: dict[str, str], billing_listener, tls_files: dict[str, str], stack_logs: StackLogs
) -> Iterator[str]:
    """The connector's HTTP side under gunicorn over TLS; yields its origin."""
    log_path = stack_logs.path("billing connector")
    with gunicorn("dps_billing.wsgi:create()", billing_env, tls_files, log_path, listener=billing_listener) as origin:
        yield origin


@pytest.fixture(scope="session")
def billing_worker(billing_env: dict[str, str], stack_logs: StackLogs) -> Iterator[subprocess.Popen]:
    """The connector's push worker."""
    log_path = stack_logs.path("billing worker")
    with _process([str(BIN / "dealpricing-billing"), "worker"], billing_env, log_path) as process:
        yield process


@pytest.fixture(scope="session")
def billing_relay(billing_env: dict[str, str], stack_logs: StackLogs) -> Iterator[subprocess.Popen]:
    """The shared outbox relay on the connector's database: publishes the billing.* events."""
    log_path = stack_logs.path("billing outbox relay")
    with _process([str(BIN / "dps-outbox-relay")], billing_env, log_path) as process:
        yield process


@pytest.fixture(scope="session")
def billing(
    billing_worker: subprocess.Popen, billing_relay: subprocess.Popen, billing_server: str, api: Api,
    billing_stand_in: BillingStandIn, tls_files: dict[str, str],
) -> Billing:
    """The billing stack: the connector's API, its worker and relay, the platform stand-in."""
    stack = Billing(DocumentedApi(billing_server, tls_files["ca"]), api, billing_stand_in, tls_files["ca"])
    stack.watch(billing_worker, billing_relay)
    return stack
