"""The sign-in POST's answer time for a known and for an unknown email (issue 25): the answer must not
tell them apart, so the mail goes out from the console's queue, never within the request.

Fresh databases on DATABASE_URL's server; the api seeded with ``make run``'s demo organization
(``dps_api.cli.seed``) under gunicorn over TLS (one worker); the console under gunicorn over TLS (one
worker, the production settings) with its mail worker (``dealpricing-console worker``, unless
``--no-worker``: for a console that mails within the request) and a real SMTP server (aiosmtpd, the
console suite's). The dispatcher and the connector are not needed by sign-in: their URLs lead nowhere.

Then ``--tries`` POSTs of ``/console/sign-in`` per email, one at a time, known and unknown in turn
(the demo admin; an address nobody has), each from the sign-in form's page on one keep-alive
connection, its redirect not followed. Printed and measured: the client's answer time (median, p90)
and the console's own ``durationMs`` (its JSON request log), per email. Rate limits are raised out of
the way. Speed is measured here and never asserted in tests.

    .venv/bin/python bench/console_sign_in.py [--tries 200]
    PYTHONPATH=<an older checkout>/services/console/src .venv/bin/python bench/console_sign_in.py --no-worker
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
from dps_testing.processes import gunicorn, stop, write_tls_files
from dps_testing.rate_limits import UNTHROTTLED

ROOT = Path(__file__).resolve().parents[1]
CSRF = re.compile(r'name="csrf" value="([^"]*)"')
ONCE = re.compile(r'name="once" value="([^"]*)"')
UNKNOWN = "nobody-at-all@unknown.example"


def durations(log: Path) -> list[float]:
    """The console's ``durationMs`` of each POST /console/sign-in, in order."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            record: dict[str, Any] = json.loads(line)
        except ValueError:
            continue
        if record.get("message") == "request" and record.get("method") == "POST" and record.get("route") == "/console/sign-in":
            found.append(float(record["durationMs"]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=200, help="sign-in POSTs per email (default 200)")
    parser.add_argument("--no-worker", action="store_true", help="start no mail worker (a console mailing within the request)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "services" / "console" / "tests"))
    from dps_api.cli.seed import seed_and_issue_admin_key
    from dps_api.cli.seed.data import USERS
    from dps_api.settings import Settings as ApiSettings

    from console_helpers import start_mailbox  # the suite's real SMTP server (aiosmtpd)

    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-console-sign-in-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    tls = write_tls_files(work)
    known = USERS["admin"][0]
    tokens = {"INTERNAL_API_TOKEN": "bench-internal-token-0123456789abcdef0123",
              "CONSOLE_API_TOKEN": "bench-console-token-0123456789abcdef0123",
              "CURSOR_SECRET": "bench-cursor-secret-0123456789abcdef0123456"}
    base = {**os.environ, "LOG_LEVEL": "INFO", "API_CA_FILE": tls["ca"], **UNTHROTTLED}
    answered: dict[str, list[float]] = {known: [], UNKNOWN: []}

    with ExitStack() as stack:
        dbs = {name: stack.enter_context(fresh_database(args.database_url, f"dps_bench_sign_in_{name}"))
               for name in ("api", "console")}
        api_env = {**base, **tokens, "DATABASE_URL": dbs["api"], "LOG_LEVEL": "WARNING",
                   "API_KEY_PEPPER": "bench-pepper-0123456789abcdef0123456789abcdef"}
        migrations.upgrade("dps_api", dbs["api"])
        seed_and_issue_admin_key(ApiSettings.from_env(api_env))
        api = stack.enter_context(gunicorn("dps_api.wsgi:create()", api_env, tls, work / "api.log", workers=1))

        mailbox = stack.enter_context(start_mailbox())
        migrations.upgrade("dps_console", dbs["console"])
        console_env = {
            **base, "DATABASE_URL": dbs["console"], "API_URL": api + "/external/v1", "API_INTERNAL_URL": api,
            "WEBHOOKS_URL": "https://127.0.0.1:9/external/v1", "BILLING_URL": "https://127.0.0.1:9/external/v1",
            "CONSOLE_API_TOKEN": tokens["CONSOLE_API_TOKEN"], "SMTP_URL": mailbox.url,
            "MAIL_FROM": "console@bench.example", "CONSOLE_SECRET_KEY": new_key(),
            "CONSOLE_SIGN_IN_PER_EMAIL": "1000", "CONSOLE_SIGN_IN_PER_CLIENT": "100000",
        }
        log = work / "console.log"
        listener_env = {**console_env, "CONSOLE_PUBLIC_URL": "https://127.0.0.1/console"}  # only links' base
        console = stack.enter_context(gunicorn("dps_console.wsgi:create()", listener_env, tls, log, workers=1))
        if not args.no_worker:
            with open(work / "mail-worker.log", "wb") as worker_log:
                worker = subprocess.Popen([str(Path(sys.executable).with_name("dealpricing-console")), "worker"],
                                          env=listener_env, stdout=worker_log, stderr=subprocess.STDOUT)
            stack.callback(stop, worker)

        http = requests.Session()
        http.trust_env = False
        sign_in = console + "/console/sign-in"

        def ask(email: str) -> float:
            page = http.get(sign_in, timeout=30, verify=tls["ca"]).text
            form = {"email": email, "csrf": CSRF.search(page).group(1)}  # type: ignore[union-attr]
            once = ONCE.search(page)
            if once:
                form["once"] = once.group(1)
            started = time.perf_counter()
            resp = http.post(sign_in, data=form, allow_redirects=False, timeout=30, verify=tls["ca"])
            elapsed = (time.perf_counter() - started) * 1000
            assert resp.status_code == 303, (resp.status_code, resp.text[:300])
            return elapsed

        for email in (known, UNKNOWN):  # warm both paths
            ask(email)
        before = len(durations(log))
        for _ in range(args.tries):
            for email in (known, UNKNOWN):
                answered[email].append(ask(email))
        time.sleep(0.5)
        server = durations(log)[before:]
        deadline = time.monotonic() + 60  # the worker catches up: every known request got its mail
        while len(mailbox.to(known)) < args.tries + 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        mailed = len(mailbox.to(known))

    by_email = {known: server[0::2], UNKNOWN: server[1::2]}
    print(f"\nsign-in POST, {args.tries} tries per email, {'no mail worker' if args.no_worker else 'mail worker'}; "
          f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"{'email':10} {'client p50 ms':>14} {'p90':>7} {'server p50 ms':>14} {'p90':>7}")
    for label, email in (("known", known), ("unknown", UNKNOWN)):
        client, own = sorted(answered[email]), sorted(by_email[email])
        p90 = client[int(0.9 * len(client)) - 1]
        own_p90 = own[int(0.9 * len(own)) - 1] if own else float("nan")
        print(f"{label:10} {statistics.median(client):14.2f} {p90:7.2f} "
              f"{statistics.median(own) if own else float('nan'):14.2f} {own_p90:7.2f}")
    print(f"mails received for the known email: {mailed} (of {args.tries + 1} asked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
