"""``make bench-console``: every page of the settings console, its server time and its calls to the
services, on the demo data (issue 16).

Fresh databases on DATABASE_URL's server; the api seeded with ``make run``'s demo organization
(``dps_api.cli.seed``); the api, the webhook dispatcher, the billing connector (the platform stand-in
behind it) and the console each under gunicorn with the production settings over TLS (one worker
each: a shared machine), every service logging its JSON ``request`` lines (``durationMs``). The demo
admin signs in (a real SMTP server receives the link), adds a webhook endpoint, sends a test event
and issues a key, through the console's own forms. Then, one request at a time:

- each page ``--rounds`` times, the pages interleaved within a round; **server time** is the
  console's own ``durationMs`` for that request (its log), p50 and p95 per page;
- the endpoint's page reads its traffic too (``/stats``, issue 27): the bench's endpoint gets a week
  of history first, ``--history`` deliveries spread over 7 days with one to three attempts each,
  written to the dispatcher's rows as its worker records them; the page is timed over 24 hours and
  over 7 days;
- each page once more alone, counting the requests each service logged meanwhile: the console's
  **calls per service** (the api's key checks by the dispatcher and the connector are not counted:
  they are the services' own, cached ``KEY_CACHE_TTL_SECONDS``). The event catalogue is kept by the
  console for a few minutes: its count is that of a visit within that time (the first calls the
  dispatcher once).

With ``--baseline TREE`` (``git worktree add /tmp/old <rev>``), a second console is served from that
tree's ``services/console/src`` (the same services, database and key, so the same session), and each
page is requested of both in turn, which first alternating by round: before and after in one run,
under the same load. Its table follows; calls are counted for this tree's console only. Calls made
side by side overlap at the dispatcher only as far as it can serve two requests at once: with one
worker (the default here) only its waits on PostgreSQL overlap; ``--webhooks-workers 2`` is the
deployment's default.

Prints a table, exits 1 when a page is over 150 ms at p95 or calls a service more often than it
should: once, but twice the dispatcher for the endpoint's page (the endpoint, then its traffic).
Speed is measured here and never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import requests
from databases import fresh_database

from dps_common import migrations
from dps_common.crypto import new_key
from dps_testing.processes import bound_listener, gunicorn, stop, write_tls_files
from dps_testing.rate_limits import UNTHROTTLED

P95_LIMIT_MS = 150.0
CALLS_ALLOWED = {"webhook detail (24h traffic)": 2, "webhook detail (7d traffic)": 2}  # the endpoint and its /stats
ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("api", "webhooks", "billing")
LINK = re.compile(r"https://\S+/sign-in/link\?token=([A-Za-z0-9_-]+)")
CSRF = re.compile(r'name="csrf" value="([^"]*)"')
ONCE = re.compile(r'name="once" value="([^"]*)"')  # each form's one-time token (issue 25)


def requests_logged(log: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("message") == "request":
                lines.append(record)
    return lines


def settled(logs: dict[str, Path], counts: dict[str, int], expect: str, min_new: int = 1) -> dict[str, list[dict[str, Any]]]:
    """The request lines each log gained since ``counts``, once ``expect``'s has ``min_new`` and none moves."""
    deadline = time.monotonic() + 5
    last: dict[str, int] = {}
    while True:
        now = {name: requests_logged(path) for name, path in logs.items()}
        sizes = {name: len(lines) for name, lines in now.items()}
        if sizes[expect] - counts[expect] >= min_new and sizes == last or time.monotonic() > deadline:
            return {name: lines[counts[name]:] for name, lines in now.items()}
        last = sizes
        time.sleep(0.05)


class Browser:
    """A requests session as the person's browser: cookies, each form's CSRF token sent back."""

    def __init__(self, root: str, ca: str):
        self.root = root
        self.http = requests.Session()
        self.ca = ca
        self.last = ""

    def get(self, path: str) -> requests.Response:
        resp = self.http.get(self.root + path, allow_redirects=True, timeout=30, verify=self.ca)
        self.last = resp.text
        return resp

    def post(self, path: str, form: list[tuple[str, str]]) -> requests.Response:
        token = CSRF.search(self.last)
        assert token, "no CSRF token on the last page"
        once = ONCE.search(self.last)
        tokens = [("csrf", token.group(1))] + ([("once", once.group(1))] if once else [])
        resp = self.http.post(self.root + path, data=[*form, *tokens], allow_redirects=True,
                              timeout=30, verify=self.ca)
        self.last = resp.text
        return resp


def overlapping(console_log: Path, service_log: Path) -> tuple[int, int, float]:
    """Of the console's requests that made two calls to the service (the endpoint page's): how many,
    in how many the two were under way at the same time at the service, and the median overlap (ms;
    negative: the gap between them). From each service line's end (``time``) less its ``durationMs``."""
    from datetime import datetime

    calls: dict[str, list[tuple[float, float]]] = {}
    for record in requests_logged(service_log):
        end = datetime.fromisoformat(str(record["time"]).replace("Z", "+00:00")).timestamp()
        calls.setdefault(str(record.get("requestId")), []).append((end - float(record["durationMs"]) / 1000, end))
    overlaps = []
    for record in requests_logged(console_log):
        pair = sorted(calls.get(str(record.get("requestId")), []))
        if len(pair) == 2:
            overlaps.append(min(pair[0][1], pair[1][1]) - pair[1][0])
    together = sum(1 for overlap in overlaps if overlap > 0)
    return len(overlaps), together, 1000 * statistics.median(overlaps) if overlaps else 0.0


def seed_week(database_url: str, endpoint: str, count: int) -> None:
    """``count`` deliveries of the endpoint's test event over the last 7 days, as the worker records
    them: one to three attempts each (503s, then a 200 for most), so each hour has both kinds."""
    import random
    from datetime import UTC, datetime, timedelta

    import psycopg

    from dps_common.ids import new_id

    rng = random.Random(27)
    now = datetime.now(UTC)
    with psycopg.connect(database_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as db:
        test_delivery = db.execute(
            "SELECT organization_id, event_id, event_type FROM webhook_deliveries WHERE endpoint_id = %s LIMIT 1",
            (endpoint,)).fetchone()
        assert test_delivery is not None, "the endpoint's test delivery is missing"
        org, event_id, event_type = test_delivery
        deliveries, attempts = [], []
        for _ in range(count):
            created = now - timedelta(seconds=rng.uniform(60, 7 * 86400 - 60))
            statuses = [503] * rng.choice((0, 0, 0, 1, 2)) + [200 if rng.random() < 0.95 else 503]
            last = created + timedelta(seconds=30 * (len(statuses) - 1) + 0.2)
            delivery = new_id()
            final = "SUCCESS" if statuses[-1] == 200 else "FAILED"
            deliveries.append((delivery, org, endpoint, event_id, event_type, final, len(statuses), created,
                               last, last if final == "SUCCESS" else None, statuses[-1], rng.randint(20, 400)))
            for i, code in enumerate(statuses):
                attempts.append((new_id(), delivery, i + 1, created + timedelta(seconds=30 * i + 0.2), code,
                                 None if code == 200 else f"HTTP {code}", rng.randint(20, 400)))
        with db.cursor() as cur:
            cur.executemany(
                "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, "
                "is_test, attempt_count, created_at, last_attempted_at, completed_at, last_response_status, "
                "last_duration_ms) VALUES (%s, %s, %s, %s, %s, %s, false, %s, %s, %s, %s, %s, %s)", deliveries)
            cur.executemany(
                "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status, "
                "error_message, duration_ms) VALUES (%s, %s, %s, %s, %s, %s, %s)", attempts)
        db.execute("ANALYZE webhook_deliveries; ANALYZE webhook_delivery_attempts")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="requests per page (default 100)")
    parser.add_argument("--history", type=int, default=5000, help="the endpoint's deliveries over 7 days (default 5000)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="TREE",
                        help="also serve the console from this work tree's code and time it in alternation")
    parser.add_argument("--webhooks-workers", type=int, default=1,
                        help="the dispatcher's gunicorn workers (default 1; the deployment's default is 2)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "services" / "console" / "tests"))
    from dps_api.cli.seed import seed_and_issue_admin_key
    from dps_api.cli.seed.data import USERS
    from dps_api.settings import Settings as ApiSettings
    from dps_billing_stand_in.server import BillingStandIn

    from console_helpers import start_mailbox  # the suite's real SMTP server (aiosmtpd)

    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-console-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    tls = write_tls_files(work)
    logs = {name: work / f"{name}.log" for name in ("console", *SERVICES)}
    old_log = work / "console-baseline.log"
    admin_email = USERS["admin"][0]
    tokens = {"INTERNAL_API_TOKEN": "bench-internal-token-0123456789abcdef0123",
              "CONSOLE_API_TOKEN": "bench-console-token-0123456789abcdef0123",
              "CURSOR_SECRET": "bench-cursor-secret-0123456789abcdef0123456"}
    base = {**os.environ, "LOG_LEVEL": "INFO", "API_CA_FILE": tls["ca"], **UNTHROTTLED}

    with ExitStack() as stack:
        dbs = {name: stack.enter_context(fresh_database(args.database_url, f"dps_bench_console_{name}"))
               for name in ("api", "webhooks", "billing", "console")}
        api_env = {**base, **tokens, "DATABASE_URL": dbs["api"], "KEY_CACHE_TTL_SECONDS": "1",
                   "API_KEY_PEPPER": "bench-pepper-0123456789abcdef0123456789abcdef"}
        migrations.upgrade("dps_api", dbs["api"])
        seed_and_issue_admin_key(ApiSettings.from_env(api_env))
        api = stack.enter_context(gunicorn("dps_api.wsgi:create()", api_env, tls, logs["api"], workers=1))

        migrations.upgrade("dps_webhooks", dbs["webhooks"])
        webhooks = stack.enter_context(gunicorn("dps_webhooks.wsgi:create()", {
            **base, "DATABASE_URL": dbs["webhooks"], "API_URL": api, "CURSOR_SECRET": tokens["CURSOR_SECRET"],
            "INTERNAL_API_TOKEN": tokens["INTERNAL_API_TOKEN"], "WEBHOOK_SECRET_KEY": new_key(),
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8", "KEY_CACHE_TTL_SECONDS": "30"}, tls, logs["webhooks"],
            workers=args.webhooks_workers))

        console_listener, billing_listener = bound_listener(), bound_listener()
        console_url = f"https://127.0.0.1:{console_listener.getsockname()[1]}/console"
        billing = f"https://127.0.0.1:{billing_listener.getsockname()[1]}"
        callback = billing + "/external/v1/billing-connection/callback"
        platform_secret, client_id, hook_secret = "sk_test_bench_console", "ca_bench_console", "whsec_bench_console_0123456789"
        stand_in = BillingStandIn.start(secret_key=platform_secret, client_id=client_id, redirect_uris=[callback],
                                        webhook_url=billing + "/external/v1/billing-platform/webhooks",
                                        webhook_secret=hook_secret)
        stack.callback(stand_in.stop)
        migrations.upgrade("dps_billing", dbs["billing"])
        stack.enter_context(gunicorn("dps_billing.wsgi:create()", {
            **base, "DATABASE_URL": dbs["billing"], "API_URL": api, "INTERNAL_API_TOKEN": tokens["INTERNAL_API_TOKEN"],
            "CURSOR_SECRET": tokens["CURSOR_SECRET"], "BILLING_SECRET_KEY": platform_secret, "BILLING_CLIENT_ID": client_id,
            "BILLING_API_URL": stand_in.api_url, "BILLING_MARKETPLACE_URL": stand_in.marketplace_url,
            "BILLING_DASHBOARD_URL": stand_in.dashboard_url, "BILLING_REDIRECT_URI": callback,
            "BILLING_WEBHOOK_SECRET": hook_secret, "BILLING_TOKEN_KEY": new_key(),
            "BILLING_STATE_SECRET": "bench-console-state-secret-0123456789abcdef", "CONSOLE_URL": console_url,
            "KEY_CACHE_TTL_SECONDS": "30"}, tls, logs["billing"], workers=1, listener=billing_listener))

        mailbox = stack.enter_context(start_mailbox())
        migrations.upgrade("dps_console", dbs["console"])
        console_env = {
            **base, "DATABASE_URL": dbs["console"], "API_URL": api + "/external/v1", "API_INTERNAL_URL": api,
            "WEBHOOKS_URL": webhooks + "/external/v1", "BILLING_URL": billing + "/external/v1",
            "CONSOLE_API_TOKEN": tokens["CONSOLE_API_TOKEN"], "SMTP_URL": mailbox.url,
            "MAIL_FROM": "console@bench.example", "CONSOLE_PUBLIC_URL": console_url,
            "CONSOLE_SECRET_KEY": new_key()}
        console = stack.enter_context(gunicorn("dps_console.wsgi:create()", console_env, tls, logs["console"],
                                               workers=1, listener=console_listener))
        # the sign-in mail is sent by the console's mail worker (issue 25)
        worker = subprocess.Popen([str(Path(sys.executable).with_name("dealpricing-console")), "worker"],
                                  env=console_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(stop, worker)
        old_console = None
        if args.baseline is not None:  # the same console's settings, the old tree's code first on the path
            old_env = {**console_env, "PYTHONPATH": os.pathsep.join(
                [str(args.baseline.resolve() / "services/console/src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
            old_console = stack.enter_context(gunicorn("dps_console.wsgi:create()", old_env, tls, old_log, workers=1))

        person = Browser(console + "/console", tls["ca"])
        person.get("/sign-in")
        assert person.post("/sign-in", [("email", admin_email)]).status_code == 200
        deadline = time.monotonic() + 30
        while not mailbox.to(admin_email) and time.monotonic() < deadline:
            time.sleep(0.1)
        token = LINK.search(mailbox.to(admin_email)[-1].get_content())
        assert token, "no sign-in link in the mail"
        person.get("/sign-in/link?token=" + token.group(1))
        assert person.post("/sign-in/link", [("token", token.group(1))]).url == console + "/console"
        person.get("/webhooks/new")
        created = person.post("/webhooks/new", [("url", "https://127.0.0.1:9/hooks"), ("description", "bench"),
                                                ("eventTypes", "quote.approved")])
        assert created.status_code == 200, created.text[:500]  # the secret's page, after the redirect
        endpoint = re.search(r'href="/console/webhooks/([0-9a-f-]{36})"', created.text).group(1)  # type: ignore[union-attr]
        person.get(f"/webhooks/{endpoint}")
        person.post(f"/webhooks/{endpoint}/test", [])
        log_page = person.get(f"/webhooks/{endpoint}/deliveries").text
        delivery = re.search(rf"/console/webhooks/{endpoint}/deliveries/([0-9a-f-]{{36}})", log_page).group(1)  # type: ignore[union-attr]
        seed_week(dbs["webhooks"], endpoint, args.history)
        person.get("/api-keys/new")
        issued = person.post("/api-keys/new", [("name", "bench key"), ("role", "user")])
        assert issued.status_code == 200, issued.text[:500]
        key_id = re.search(r"/console/api-keys/([A-Za-z0-9_-]+)/rotate", person.get("/api-keys").text).group(1)  # type: ignore[union-attr]

        pages = {
            "home": "", "API keys": "/api-keys", "issue a key (form)": "/api-keys/new?form=" + "a" * 43,
            "confirm rotate key": f"/api-keys/{key_id}/rotate?form=" + "b" * 43, "team": "/team?view=" + "e" * 43,
            "webhooks": "/webhooks", "webhook form": "/webhooks/new?form=" + "c" * 43, "event catalogue": "/webhooks/event-types",
            "webhook detail (24h traffic)": f"/webhooks/{endpoint}?view=" + "f" * 43,
            "webhook detail (7d traffic)": f"/webhooks/{endpoint}?window=7d&view=" + "g" * 43,
            "webhook edit form": f"/webhooks/{endpoint}/edit?form=" + "d" * 43,
            "delivery log": f"/webhooks/{endpoint}/deliveries",
            "delivery": f"/webhooks/{endpoint}/deliveries/{delivery}?view=" + "h" * 43,
            "billing": "/billing?view=" + "i" * 43, "billing pushes": "/billing/pushes", "not found (404)": "/nowhere",
        }
        session = requests.Session()  # the timed requests: the person's cookie, one keep-alive connection
        session.cookies.update(person.http.cookies)

        def fetch(path: str, origin: str = console) -> None:
            resp = session.get(origin + "/console" + path, allow_redirects=False, timeout=30, verify=tls["ca"])
            assert resp.status_code in (200, 404), (path, resp.status_code)

        calls: dict[str, dict[str, int]] = {}
        routes: dict[str, list[str]] = {}
        for name, path in pages.items():  # also warms each page once
            before = {n: len(requests_logged(p)) for n, p in logs.items()}
            fetch(path)
            new = settled(logs, before, "console")
            console_calls = {service: [f"{service} {r.get('method')} {r.get('route')}" for r in new[service]
                                       if not str(r.get("route", "")).startswith("/internal/v1/key")] for service in SERVICES}
            calls[name] = {service: len(found) for service, found in console_calls.items()}
            routes[name] = [call for found in console_calls.values() for call in found]

        if old_console is not None:
            for path in pages.values():  # warmed too
                fetch(path, old_console)
        consoles = {"console": (console, logs["console"])}
        if old_console is not None:
            consoles["baseline"] = (old_console, old_log)
        logged_before = {name: len(requests_logged(log)) for name, (_, log) in consoles.items()}
        for round_ in range(args.rounds):
            order = list(consoles.values()) if round_ % 2 == 0 else list(consoles.values())[::-1]
            for path in pages.values():
                for origin, _ in order:
                    fetch(path, origin)
        time.sleep(0.5)
        paths = list(pages.values())
        timings: dict[str, dict[str, list[float]]] = {}
        for name, (_, log) in consoles.items():
            timed = requests_logged(log)[logged_before[name]:]
            assert len(timed) >= len(paths) * args.rounds, (name, len(timed), len(paths) * args.rounds)
            for i, record in enumerate(timed[: len(paths) * args.rounds]):
                timings.setdefault(name, {}).setdefault(paths[i % len(paths)], []).append(float(record["durationMs"]))
        by_route = timings["console"]

    failed = False
    print(f"\nconsole pages, {args.rounds} requests each, server time (the console's durationMs), "
          f"{platform.node()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'page':28} {'p50 ms':>7} {'p95 ms':>7}  " + "  ".join(f"{s:>8}" for s in SERVICES) + "  calls")
    for name, path in pages.items():
        times = sorted(by_route[path])
        p50 = statistics.median(times)
        p95 = times[max(0, round(0.95 * len(times)) - 1)]
        over = p95 > P95_LIMIT_MS or any(c > CALLS_ALLOWED.get(name, 1) for c in calls[name].values())
        failed |= over
        print(f"{name:28} {p50:7.1f} {p95:7.1f}  " + "  ".join(f"{calls[name][s]:>8}" for s in SERVICES)
              + "  " + ("; ".join(routes[name]) or "-") + ("  <- over" if over else ""))
    if "baseline" in timings:
        print(f"\nthe same pages of the console served from {args.baseline} (alternating with the above, same rounds)")
        print(f"{'page':28} {'p50 ms':>7} {'p95 ms':>7}   {'this p50':>8} {'this p95':>8}")
        for name, path in pages.items():
            old, new = sorted(timings["baseline"][path]), sorted(by_route[path])
            print(f"{name:28} {statistics.median(old):7.1f} {old[max(0, round(0.95 * len(old)) - 1)]:7.1f}   "
                  f"{statistics.median(new):8.1f} {new[max(0, round(0.95 * len(new)) - 1)]:8.1f}")
    for name, log in (("this tree's", logs["console"]), ("the baseline's", old_log)):
        if log.exists():
            pages_, together, median = overlapping(log, logs["webhooks"])
            print(f"{name} console: {pages_} pages with two dispatcher calls, the two under way together in "
                  f"{together}; median overlap {median:.1f} ms")
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
