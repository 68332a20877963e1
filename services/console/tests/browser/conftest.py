"""The console served for real to a real browser: gunicorn over HTTPS (``dps_console.wsgi``, the
production settings, two workers) on a database of its own, calling the real api (gunicorn, the
suite's), the real webhook dispatcher (its app on a socket, with a delivery worker in a thread and a
receiver that answers 200) and the real billing connector (its app on a socket, the platform
stand-in, its ``CONSOLE_URL`` this console's address, so the connect flow comes back here). The
sign-in mail is sent by the console's mail worker (its own process) to the suite's real SMTP server.

Headless Chromium is the test plugin's (``chromium``: the system's, never one Playwright downloads;
without it these tests skip, except under ``CI=true`` where that is a failure). ``page`` here is a
fresh profile that accepts the test CA's certificate (``ignore_https_errors``) and may write to the
clipboard (the copy button). ``shot(page, name)`` saves a full-page screenshot to
``.run/screenshots/console/`` (gitignored) and lists it in ``index.txt`` there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import requests

from dps_common import migrations
from dps_common.crypto import new_key
from dps_testing.browser import STEP_MS
from dps_testing.processes import bound_listener, gunicorn, stop
from dps_testing.provisioning import Admin, Org
from dps_testing.rate_limits import UNTHROTTLED
from dps_testing.services import fresh_database

from console_helpers import Mailbox, late_served, served

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

ROOT = Path(__file__).resolve().parents[4]
SHOTS = ROOT / ".run" / "screenshots" / "console"
DATABASES: dict[str, str] = {}  # each service fixture names its database here, for the secret scan
WITHIN_SECONDS = 2.0  # revocation, rotation and sign-out reach the api (and its key cache) by then
MAIL_WITHIN_SECONDS = 20.0  # a queued sign-in mail is sent by then, on a loaded machine


@dataclass
class Console:
    origin: str  # https://127.0.0.1:<port>
    env: dict[str, str]
    log: Path
    mail_worker: subprocess.Popen[bytes] | None = None  # ``dealpricing-console worker``

    @property
    def root(self) -> str:
        return self.origin + "/console"


@dataclass
class Receiver:
    """A webhook receiver on loopback answering 200; what it received."""

    url: str
    received: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture(scope="session")
def console_listener() -> Any:
    """The console's socket, bound first: the connector must know the console's address."""
    return bound_listener()


@pytest.fixture(scope="session")
def console_public_url(console_listener: Any) -> str:
    return f"https://127.0.0.1:{console_listener.getsockname()[1]}/console"


@pytest.fixture(scope="session")
def browser_org(admin_cli: Admin) -> Org:
    """An organization of the browser tests' own (admin, user, view only)."""
    return admin_cli.organization("Browser Co")


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    box = Receiver("")

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        box.received.append({"path": environ["PATH_INFO"], "body": environ["wsgi.input"].read(size)})
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"received"]

    with served(app) as origin:
        box.url = origin + "/hooks"
        yield box


@pytest.fixture(scope="session")
def webhooks_origin(api_origin: str, api_env: dict[str, str], tls_files: dict[str, str]) -> Iterator[str]:
    """The real dispatcher with a delivery worker (a thread of this process), so a test event is
    attempted; plain http to a loopback receiver (its development setting)."""
    from dps_common.db import Transactions, make_engine

    from dps_webhooks.composition import build_http as create_dispatcher
    from dps_webhooks.settings import Settings as DispatcherSettings
    from dps_webhooks.workers.deliveries import DeliveryWorker

    with fresh_database("dps_console_browser_webhooks") as url:
        DATABASES["dispatcher"] = url
        migrations.upgrade("dps_webhooks", url)
        settings = DispatcherSettings.from_env({
            "DATABASE_URL": url, "CURSOR_SECRET": api_env["CURSOR_SECRET"], "WEBHOOK_SECRET_KEY": new_key(),
            "API_URL": api_origin, "API_CA_FILE": tls_files["ca"], "INTERNAL_API_TOKEN": api_env["INTERNAL_API_TOKEN"],
            "KEY_CACHE_TTL_SECONDS": "0", "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
            "WEBHOOK_ALLOW_INSECURE_LOOPBACK": "true", "DPS_ENVIRONMENT": "development",
            "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "5", **UNTHROTTLED,
        })
        app = create_dispatcher(settings)
        engine = make_engine(settings.database_url, application_name="dps-console-browser-worker")
        worker_tx = Transactions.for_engine(engine)
        worker = DeliveryWorker(settings, worker_tx, engine.url.set(drivername="postgresql").render_as_string(hide_password=False))
        thread = threading.Thread(target=worker.run, name="console-browser-delivery-worker", daemon=True)
        thread.start()
        try:
            with served(app) as origin:
                yield origin
        finally:
            worker.stop()
            thread.join(timeout=30)
            worker_tx.dispose()
            app.context.tx.dispose()


@pytest.fixture(scope="session")
def billing_origin(api_origin: str, api_env: dict[str, str], tls_files: dict[str, str],
                   console_public_url: str) -> Iterator[str]:
    """The real connector (the platform stand-in behind it) whose connect flow returns to this console,
    with a push worker in a thread."""
    from dps_billing.composition import build_http as create_connector
    from dps_billing.composition import build_push_worker
    from dps_billing.settings import Settings as ConnectorSettings
    from dps_billing_stand_in.server import BillingStandIn

    secret_key, client_id, webhook_secret = "sk_test_console_browser", "ca_console_browser", "whsec_console_browser_0123456789"
    with fresh_database("dps_console_browser_billing") as url, late_served() as (origin, late):
        DATABASES["connector"] = url
        migrations.upgrade("dps_billing", url)
        callback = origin + "/external/v1/billing-connection/callback"
        platform = BillingStandIn.start(secret_key=secret_key, client_id=client_id, redirect_uris=[callback],
                                        webhook_url=origin + "/external/v1/billing-platform/webhooks",
                                        webhook_secret=webhook_secret)
        try:
            settings = ConnectorSettings.from_env({
                "DATABASE_URL": url, "API_URL": api_origin, "API_CA_FILE": tls_files["ca"],
                "INTERNAL_API_TOKEN": api_env["INTERNAL_API_TOKEN"], "CURSOR_SECRET": api_env["CURSOR_SECRET"],
                "BILLING_SECRET_KEY": secret_key, "BILLING_CLIENT_ID": client_id,
                "BILLING_API_URL": platform.api_url, "BILLING_MARKETPLACE_URL": platform.marketplace_url,
                "BILLING_DASHBOARD_URL": platform.dashboard_url, "BILLING_REDIRECT_URI": callback,
                "BILLING_WEBHOOK_SECRET": webhook_secret, "BILLING_TOKEN_KEY": new_key(),
                "BILLING_STATE_SECRET": "console-browser-state-secret-0123456789abcdef",
                "CONSOLE_URL": console_public_url, "KEY_CACHE_TTL_SECONDS": "0", "LOG_LEVEL": "WARNING",
                **UNTHROTTLED,
            })
            late.app = create_connector(settings)
            worker = build_push_worker(settings)  # pushes run (the pushes page shows their progress)
            thread = threading.Thread(target=worker.run, name="console-browser-push-worker", daemon=True)
            thread.start()
            yield origin
            worker.stop()
            thread.join(timeout=30)
            late.app.context.tx.dispose()
        finally:
            platform.stop()


@pytest.fixture(scope="session")
def databases(console: Console, api_env: dict[str, str]) -> dict[str, str]:
    """The database of each of the four services the browser tests run (name -> URL)."""
    return {"api": api_env["DATABASE_URL"], **DATABASES}


@pytest.fixture(scope="session")
def console(console_listener: Any, console_public_url: str, api_origin: str, api_env: dict[str, str], webhooks_origin: str,
            billing_origin: str, tls_files: dict[str, str], mailbox: Mailbox,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """The console under gunicorn over HTTPS (production settings), its own migrated database."""
    with fresh_database("dps_console_browser") as url:
        DATABASES["console"] = url
        migrations.upgrade("dps_console", url)
        env = {
            "DATABASE_URL": url,
            "API_URL": api_origin + "/external/v1",
            "API_INTERNAL_URL": api_origin,
            "WEBHOOKS_URL": webhooks_origin + "/external/v1",
            "BILLING_URL": billing_origin + "/external/v1",
            "API_CA_FILE": tls_files["ca"],
            "CONSOLE_API_TOKEN": api_env["CONSOLE_API_TOKEN"],
            "SMTP_URL": mailbox.url,
            "MAIL_FROM": "console@dealpricing.test",
            "CONSOLE_PUBLIC_URL": console_public_url,
            "CONSOLE_SECRET_KEY": new_key(),
            "CONSOLE_SIGN_IN_PER_EMAIL": "1000",  # the tests sign the same people in many times
            "CONSOLE_SIGN_IN_PER_CLIENT": "100000",
            "DPS_ENVIRONMENT": "production",
            "LOG_LEVEL": "WARNING",
        }
        log = tmp_path_factory.mktemp("console") / "console.log"
        with gunicorn("dps_console.wsgi:create()", {**os.environ, **env}, tls_files, log, workers=2,
                      listener=console_listener) as origin, mail_worker({**os.environ, **env}, log.parent, mailbox) as worker:
            assert origin + "/console" == console_public_url
            yield Console(origin, env, log, worker)


@contextmanager
def mail_worker(env: dict[str, str], folder: Path, mailbox: Mailbox) -> Iterator[subprocess.Popen[bytes]]:
    """``dealpricing-console worker``, as deployed beside the pages: it sends the sign-in mails they
    queue. The mailbox then waits, before it is read, until the queue is empty (the mail of a
    request that has returned is then in it)."""
    command = [str(Path(sys.executable).with_name("dealpricing-console")), "worker"]
    with open(folder / "mail-worker.log", "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)

    def settle() -> None:
        deadline = time.monotonic() + MAIL_WITHIN_SECONDS
        with psycopg.connect(env["DATABASE_URL"], autocommit=True) as db:
            while db.execute("SELECT count(*) FROM console_sign_in_requests").fetchone() != (0,):
                assert process.poll() is None, "the mail worker stopped"
                assert time.monotonic() < deadline, f"sign-in mails still queued after {MAIL_WITHIN_SECONDS} s"
                time.sleep(0.05)

    mailbox.settle = settle
    try:
        yield process
    finally:
        mailbox.settle = lambda: None
        stop(process)


def _new_context(chromium: Browser) -> BrowserContext:
    context = chromium.new_context(ignore_https_errors=True)  # the test CA is not the browser's
    context.set_default_timeout(STEP_MS)
    context.set_default_navigation_timeout(STEP_MS)
    return context


@pytest.fixture
def new_page(chromium: Browser) -> Iterator[Callable[[], Page]]:
    """Fresh profiles (another person's browser), closed after the test."""
    contexts: list[BrowserContext] = []

    def make() -> Page:
        context = _new_context(chromium)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page: Callable[[], Page], console: Console) -> Page:
    made = new_page()
    made.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console.origin)
    return made


@pytest.fixture(scope="session")
def shot() -> Iterator[Callable[[Page, str], Path]]:
    """Saves a full-page screenshot under .run/screenshots/console/ and lists every one at the end."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    taken: list[Path] = []

    def take(page: Page, name: str) -> Path:
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        taken.append(path)
        return path

    yield take
    listing = "\n".join(f"{p.relative_to(ROOT)}" for p in sorted(set(taken)))
    (SHOTS / "index.txt").write_text(listing + "\n")
    print(f"\nscreenshots ({len(set(taken))}) in {SHOTS}:\n{listing}")


@pytest.fixture(scope="session")
def whoami(api_origin: str, tls_files: dict[str, str]) -> Callable[[str], int]:
    def status(key: str) -> int:
        return requests.get(api_origin + "/external/v1/whoami", headers={"x-api-key": key},
                            verify=tls_files["ca"], timeout=10).status_code

    return status


@pytest.fixture(scope="session")
def refused_within(whoami: Callable[[str], int]) -> Callable[[str], int]:
    """Polls the api with ``key`` until it answers 401, for at most WITHIN_SECONDS; the last status."""

    def poll(key: str) -> int:
        deadline = time.monotonic() + WITHIN_SECONDS
        while True:
            status = whoami(key)
            if status == 401 or time.monotonic() >= deadline:
                return status
            time.sleep(0.1)

    return poll
