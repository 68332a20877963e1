"""Slow clients against the api as ``make run`` serves it: latency of legitimate requests while 200
connections send their heads slowly or stall their bodies, and how long the slow ones are held.

    .venv/bin/python bench/slow_clients.py                        # the production worker (gunicorn_conf)
    .venv/bin/python bench/slow_clients.py --worker-class gthread # the worker it replaced, for comparison

Starts ``gunicorn -c python:dps_common.gunicorn_conf 'dps_api.wsgi:create()'`` (2 workers, plain HTTP on
127.0.0.1, as ``make run``) on a fresh database with one organization and its admin key, then per
scenario: opens the slow connections (``dps_testing.slow_clients``), sends ``--requests``
legitimate ``GET /whoami`` one after another on new connections (each given ``--patience`` seconds),
and reports how many were answered within 1 s, their p50 and max latency, how many slow connections
were still open after them, and when the server had closed them all (observed for at most
``--observe`` seconds). Bounded: 200 connections, a few requests, a deadline on the whole run.
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from databases import fresh_database
from report import load_average, machine
from seed import DEFAULT_SERVER_URL, seed
from servers import HOST, free_port

from dps_testing.slow_clients import SlowHeaders, answered_or_closed, stalled_bodies

WHOAMI = "/external/v1/whoami"
PRODUCTS = "/external/v1/products"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker-class", default=None, help="override gunicorn_conf's worker (e.g. gthread)")
    p.add_argument("--connections", type=int, default=200, help="slow connections per scenario")
    p.add_argument("--requests", type=int, default=10, help="legitimate requests per scenario")
    p.add_argument("--patience", type=float, default=3.0, help="seconds a legitimate request waits")
    p.add_argument("--observe", type=float, default=20.0, help="seconds to watch the slow connections close")
    p.add_argument("--deadline", type=int, default=600)
    return p.parse_args()


@contextmanager
def api_server(database_url: str, pepper: str, worker_class: str | None, log: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-c", "python:dps_common.gunicorn_conf", "--bind", f"{HOST}:{port}",
               "--workers", "2", "--no-control-socket"]
    if worker_class:
        command += ["--worker-class", worker_class, "--threads", "4"]
    env = {**os.environ, "DATABASE_URL": database_url, "API_KEY_PEPPER": pepper, "CURSOR_SECRET": pepper,
           "LOG_LEVEL": "WARNING"}
    with open(log, "ab") as out:
        process = subprocess.Popen([*command, "dps_api.wsgi:create()"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        origin = f"http://{HOST}:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited; see {log}")
            try:
                if ask(origin, "/healthz", {}, 2) is not None:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        yield origin
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def ask(origin: str, path: str, headers: dict[str, str], patience: float) -> float | None:
    """Seconds until a complete 2xx-4xx answer on a new connection, or None if none came in time."""
    host, port = origin.removeprefix("http://").split(":")
    started = time.perf_counter()
    conn = http.client.HTTPConnection(host, int(port), timeout=patience)
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return time.perf_counter() - started if resp.status < 500 else None
    except OSError:
        return None
    finally:
        conn.close()


def measure(origin: str, key: str, args: argparse.Namespace) -> dict[str, str]:
    latencies = [ask(origin, WHOAMI, {"x-api-key": key}, args.patience) for _ in range(args.requests)]
    answered = [x for x in latencies if x is not None]
    return {
        "answered in 1 s": f"{sum(x <= 1 for x in answered)}/{len(latencies)}",
        "answered at all": f"{len(answered)}/{len(latencies)} (patience {args.patience:g} s)",
        "p50 ms": f"{statistics.median(answered) * 1000:.1f}" if answered else "-",
        "max ms": f"{max(answered) * 1000:.1f}" if answered else "-",
    }


def held(sockets_open: Callable[[], int], observe: float) -> str:
    """When the server had closed every slow connection (seconds from now), or that it had not."""
    started = time.monotonic()
    while time.monotonic() - started < observe:
        if sockets_open() == 0:
            return f"all closed after {time.monotonic() - started:.1f} s more"
        time.sleep(0.25)
    return f"{sockets_open()} still open after {observe:g} s more"


def run(args: argparse.Namespace, stack: ExitStack) -> list[tuple[str, dict[str, str]]]:
    database_url = stack.enter_context(fresh_database(os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)))
    seeded = seed(database_url, 100)
    log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "api.log"
    origin = stack.enter_context(api_server(database_url, seeded.pepper, args.worker_class, log))
    rows = [("no slow clients", measure(origin, seeded.admin_key, args))]

    slow = SlowHeaders(origin, None, "/healthz", args.connections, interval=1.0, max_seconds=args.observe + 60)
    try:
        row = measure(origin, seeded.admin_key, args)
        row["slow ones open after"] = f"{slow.open_count()}/{args.connections}"
        row["slow ones held"] = held(slow.open_count, args.observe)
        rows.append((f"{args.connections} heads sending a line a second", row))
    finally:
        slow.close()

    key_header = {"x-api-key": seeded.admin_key}
    with stalled_bodies(origin, None, PRODUCTS, args.connections, key_header) as sockets:
        row = measure(origin, seeded.admin_key, args)
        pending = list(sockets)

        def still_open() -> int:
            pending[:] = [sock for sock in pending if not answered_or_closed(sock)]
            return len(pending)

        row["slow ones open after"] = f"{still_open()}/{args.connections}"
        row["slow ones held"] = held(still_open, args.observe)
        rows.append((f"{args.connections} bodies stopped after 1 byte", row))
    return rows


def main() -> int:
    args = parse_args()
    signal.alarm(args.deadline)
    before = load_average()
    with ExitStack() as stack:
        rows = run(args, stack)
    info = machine()
    worker = args.worker_class or "dps_common.edge.worker.EdgeWorker (gunicorn_conf)"
    print(f"\n{info['date']}; {info['nproc']} x {info['cpu']}, {info['memory']}, Python {info['python']}; "
          f"load average {before} before, {load_average()} after")
    print(f"gunicorn -c python:dps_common.gunicorn_conf --workers 2, worker: {worker}\n")
    columns = ["answered in 1 s", "answered at all", "p50 ms", "max ms", "slow ones open after", "slow ones held"]
    print("| scenario | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, row in rows:
        print(f"| {name} | " + " | ".join(row.get(c, "") for c in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
