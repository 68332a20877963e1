"""How long a revoked key keeps working: from ``keys revoke`` to the first 401 in each service.

    .venv/bin/python bench/revocation.py                       # 20 tries on RabbitMQ and on the filesystem broker
    .venv/bin/python bench/revocation.py --tries 50 --broker rabbitmq

Starts, on fresh databases: the api (gunicorn, 2 workers), its outbox relay, and the webhook
dispatcher (gunicorn, 2 workers), every one with a 60-second key cache, over HTTPS; the broker is a
fresh RabbitMQ virtual host (``AMQP_URL`` or 127.0.0.1:5672) or kombu's filesystem transport in a
temporary folder (what ``make run`` uses). Each try issues a key, has every worker of both services
cache it (requests on new connections until each service answered 200 eight times in a row), revokes
it with the admin command line's use case (``IdentityService.revoke_key``: the key's row and its event
in one transaction) and starts the clock when that transaction has committed. One thread per
service then asks on a new connection each time until it answers 401: the moment that answer
arrived is **first 401**; **settled** is the first answer of eight 401s in a row (so both workers,
almost surely, had dropped the key). The command line's own start-up (about a second of Python imports) is not counted.

Needs PostgreSQL (``DATABASE_URL``, default postgres@127.0.0.1:5432) and, for ``rabbitmq``,
RabbitMQ with ``rabbitmqctl``. Prints the table and writes ``bench/results/<date>-revocation.md``
unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import requests
from databases import fresh_database, server_version

from dps_common.crypto import new_key
from dps_common.db import Transactions, make_engine
from dps_testing.processes import gunicorn, stop, write_tls_files
from dps_testing.services import fresh_vhost

from dps_api.db.migrate import upgrade as upgrade_api
from dps_api.services.identity import IdentityService
from dps_webhooks.db.migrate import upgrade as upgrade_dispatcher

BENCH_DIR = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
PEPPER = "bench-revocation-pepper-0123456789abcdef0123456789"
CURSOR_SECRET = "bench-revocation-cursor-0123456789abcdef0123456789"
TOKEN = "bench-revocation-internal-token-0123456789abcdef"
KEY_CACHE_TTL_SECONDS = 60
IN_A_ROW = 8
GIVE_UP_SECONDS = 90.0  # past the TTL: a try that hits it measured the TTL, not the event


@contextmanager
def broker(kind: str) -> Iterator[str]:
    if kind == "rabbitmq":
        with fresh_vhost("dps_bench_revocation") as url:
            yield url
    else:
        with tempfile.TemporaryDirectory(prefix="dps-bench-broker-") as folder:
            yield f"filesystem://{folder}"


@contextmanager
def relay(env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log_path, "wb") as log:
        process = subprocess.Popen([str(BIN / "dealpricing-outbox-relay")], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        stop(process)


def status(url: str, key: str, ca: str) -> int:
    return requests.get(url, headers={"x-api-key": key, "Connection": "close"}, verify=ca, timeout=10).status_code


def cache_everywhere(url: str, key: str, ca: str) -> None:
    seen = 0
    deadline = time.monotonic() + 60
    while seen < IN_A_ROW:
        code = status(url, key, ca)
        if code != 200:
            raise RuntimeError(f"{url} answered {code} for a fresh key")
        seen += 1
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer in time")


def watch(url: str, key: str, ca: str, since: float, out: dict[str, float]) -> None:
    """``first`` and ``settled`` seconds after ``since``, when the answer arrived."""
    in_a_row, run_started = 0, 0.0
    while time.monotonic() - since < GIVE_UP_SECONDS:
        code = status(url, key, ca)
        answered = time.monotonic() - since
        if code == 401:
            out.setdefault("first", answered)
            if in_a_row == 0:
                run_started = answered
            in_a_row += 1
            if in_a_row >= IN_A_ROW:
                out["settled"] = run_started
                return
        else:
            in_a_row = 0
    out.setdefault("first", float("inf"))
    out["settled"] = float("inf")


def run(kind: str, tries: int, log_dir: Path) -> dict[str, dict[str, list[float]]]:
    results: dict[str, dict[str, list[float]]] = {"api": {"first": [], "settled": []}, "dispatcher": {"first": [], "settled": []}}
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    with ExitStack() as stack:
        api_db = stack.enter_context(fresh_database(server, "dps_bench_rev_api"))
        hooks_db = stack.enter_context(fresh_database(server, "dps_bench_rev_wh"))
        upgrade_api(api_db)
        upgrade_dispatcher(hooks_db)
        amqp = stack.enter_context(broker(kind))
        tls = write_tls_files(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dps-bench-tls-"))))
        common = {
            **os.environ,
            "CURSOR_SECRET": CURSOR_SECRET,
            "INTERNAL_API_TOKEN": TOKEN,
            "KEY_CACHE_TTL_SECONDS": str(KEY_CACHE_TTL_SECONDS),
            "AMQP_URL": amqp,
            "LOG_LEVEL": "WARNING",
        }
        api_env = {**common, "DATABASE_URL": api_db, "API_KEY_PEPPER": PEPPER}
        api = stack.enter_context(gunicorn("dps_api.wsgi:create()", api_env, tls, log_dir / f"{kind}-api.log"))
        stack.enter_context(relay(api_env, log_dir / f"{kind}-relay.log"))
        hooks_env = {
            **common,
            "DATABASE_URL": hooks_db,
            "WEBHOOK_SECRET_KEY": new_key(),
            "API_URL": api,
            "API_CA_FILE": tls["ca"],
        }
        hooks = stack.enter_context(gunicorn("dps_webhooks.wsgi:create()", hooks_env, tls, log_dir / f"{kind}-webhooks.log"))
        urls = {"api": f"{api}/external/v1/whoami", "dispatcher": f"{hooks}/external/v1/webhook-configs"}

        engine = make_engine(api_db, pool_size=2, application_name="bench-revocation")
        stack.callback(engine.dispose)
        identity = IdentityService(Transactions.for_engine(engine), PEPPER.encode(), lambda: datetime.now(UTC), lambda key_id: None)
        org = identity.create_organization("Revocation bench")
        user = identity.create_user(org.id, "admin@bench.example", "Admin", "admin")
        time.sleep(2)  # every worker's subscription is up (they start after /readyz answers)
        for attempt in range(tries):
            issued = identity.issue_key(org.id, user.id, "admin", f"try {attempt}")
            for url in urls.values():
                cache_everywhere(url, issued.secret, tls["ca"])
            identity.revoke_key(issued.id)
            since = time.monotonic()
            outs: dict[str, dict[str, float]] = {name: {} for name in urls}
            threads = [threading.Thread(target=watch, args=(url, issued.secret, tls["ca"], since, outs[name])) for name, url in urls.items()]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            for name, out in outs.items():
                results[name]["first"].append(out["first"])
                results[name]["settled"].append(out["settled"])
            print(f"  {kind} try {attempt + 1}/{tries}: " + ", ".join(
                f"{name} {out['first'] * 1000:.0f}/{out['settled'] * 1000:.0f} ms" for name, out in outs.items()), flush=True)
    return results


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), "?")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return (f"{os.cpu_count()} cores ({cpu}), {int(memory) // 1024} MiB, Python {platform.python_version()}, "
            f"kernel {platform.release()}, PostgreSQL {server_version(os.environ.get('DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/postgres'))}, "
            f"commit {commit}, load average {os.getloadavg()[0]:.2f}")


def table(all_results: dict[str, dict[str, dict[str, list[float]]]]) -> str:
    lines = ["| broker | service | first 401: median | max | settled: median | max | tries |", "|---|---|---|---|---|---|---|"]
    for kind, results in all_results.items():
        for name, series in results.items():
            first, settled = series["first"], series["settled"]
            lines.append(
                f"| {kind} | {name} | {statistics.median(first) * 1000:.0f} ms | {max(first) * 1000:.0f} ms | "
                f"{statistics.median(settled) * 1000:.0f} ms | {max(settled) * 1000:.0f} ms | {len(first)} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--broker", choices=["rabbitmq", "filesystem", "both"], default="both")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    kinds = ["rabbitmq", "filesystem"] if args.broker == "both" else [args.broker]
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="dps-bench-rev-logs-") as logs:
        all_results = {kind: run(kind, args.tries, Path(logs)) for kind in kinds}
    report = (f"# Revocation: from `keys revoke` to the first 401 ({started:%Y-%m-%d %H:%M} UTC)\n\n"
              f"Machine: {machine()}\n\nKey cache TTL {KEY_CACHE_TTL_SECONDS} s in every service; "
              f"api and dispatcher 2 gunicorn workers each.\n\n{table(all_results)}\n")
    print(report)
    if not args.no_write:
        path = BENCH_DIR / "results" / f"{started:%Y-%m-%d}-revocation.md"
        path.write_text(report)
        print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
