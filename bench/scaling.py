"""``make bench-scaling``: how the api and the webhook delivery engine scale with processes on this machine.

- **api**: the same app under gunicorn (``gthread``, 4 threads) with 1, 2 and 4 worker processes, each
  loaded with wrk on loopback (``GET /whoami`` and ``GET /products?limit=100``), in interleaved rounds.
  The three servers run side by side (an idle server costs nothing), so a round compares the three
  within seconds of each other.
- **dispatcher**: the delivery engine alone (``dealpricing-webhooks worker`` processes, 1, 2 and 4 of
  them): N due deliveries committed at once straight into the dispatcher's tables, drained to an HTTPS
  receiver; rate = delivered / (last arrival - commit). The relay, broker and consumer are left out
  (``bench/webhooks.py`` measures the full path), so the number is the engine's.

Reuses the api bench's seeding, gunicorn and wrk helpers and the webhook bench's stack. Prints the
tables (median round) and the speed-up over one process, and writes
``bench/results/<date>-scaling.md``. Bounded by --deadline; every process and database is removed at
the end whatever happens. Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

from databases import fresh_database, server_version
from load import LoadOptions, LoadResult, measure, require_wrk
from report import RESULTS_DIR, load_average
from run import git_revision
from seed import DEFAULT_SERVER_URL, seed
from servers import GunicornSettings, Server
from webhooks_load import Arrivals, Measured, Producer
from webhooks_load import measured as measure_result
from webhooks_report import machine
from webhooks_stack import Stack, build, cpu_delta, insert_deliveries

WHOAMI = "/external/v1/whoami"
PRODUCTS = "/external/v1/products?limit=100"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--processes", default="1,2,4", help="process counts to compare (comma-separated)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", choices=["api", "webhooks"], default=None, help="run one half only")
    # api
    p.add_argument("--duration", type=int, default=6, help="seconds measured per api target and round")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--connections", type=int, default=16, help="wrk connections")
    p.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    p.add_argument("--products", type=int, default=20_000)
    # webhooks
    p.add_argument("--deliveries", type=int, default=3000, help="due deliveries per engine round")
    p.add_argument("--receiver-workers", type=int, default=2)
    p.add_argument("--receiver-threads", type=int, default=16)
    p.add_argument("--deadline", type=int, default=1500, help="seconds after which the run aborts")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/")
    return p.parse_args()


def _abort(signum, frame):
    raise TimeoutError(f"aborted by signal {signum} (deadline or SIGTERM)")


def _orders(counts: list[int], rounds: int) -> list[list[int]]:
    """Each round's order of the counts: rotated, so that no count always runs first (or after the
    largest tables) on a machine whose neighbours come and go."""
    return [counts[r % len(counts):] + counts[:r % len(counts)] for r in range(rounds)]


# -- api ------------------------------------------------------------------------------------------


def api_scaling(args: argparse.Namespace, counts: list[int], server_url: str) -> tuple[list[str], list[str]]:
    options = LoadOptions(args.duration, args.warmup, args.connections, 1)
    runs: dict[tuple[str, int], list[LoadResult]] = {}
    with ExitStack() as stack:
        database_url = stack.enter_context(fresh_database(server_url))
        print(f"api: seeding {args.products:,} products ...", flush=True)
        seeded = seed(database_url, args.products)
        log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        env = {"DATABASE_URL": seeded.database_url, "API_KEY_PEPPER": seeded.pepper,
               "CURSOR_SECRET": secrets.token_hex(32), "LOG_LEVEL": "WARNING"}
        servers: dict[int, Server] = {}
        for n in counts:
            # the cap spreads wrk's keep-alive connections evenly over the workers (bench/README.md)
            cap = -(-args.connections // n) + args.threads - 1
            settings = GunicornSettings("gthread", n, args.threads, 5, cap)
            servers[n] = Server(f"api-{n}", "dps_api.wsgi:create()", settings, env, log_dir)
            stack.callback(servers[n].stop)
        for server in servers.values():
            server.wait_ready("/healthz")
        auth = {"x-api-key": seeded.admin_key}
        for round_no, order in enumerate(_orders(counts, args.rounds), 1):
            for n in order:
                for name, path in (("whoami", WHOAMI), ("products", PRODUCTS)):
                    r = measure(servers[n].url + path, options, auth, servers[n].cpu_seconds)
                    runs.setdefault((name, n), []).append(r)
                    print(f"  round {round_no} {name:9} {n} worker(s) {r.rps:9,.0f} req/s  p50 {r.p50_ms:6.2f} ms  "
                          f"p99 {r.p99_ms:6.2f} ms  server CPU {r.cpu_us:5.0f} µs/req", flush=True)
    lines = [
        "| request | gunicorn workers (x threads) | requests/s | p50 ms | p99 ms | server CPU µs/req | speed-up over 1 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for name, path in (("whoami", WHOAMI), ("products", PRODUCTS)):
        for n in counts:
            kept = _median(runs[(name, n)], lambda r: r.rps)
            speedup = _paired(runs[(name, n)], runs[(name, counts[0])], lambda r: r.rps)
            lines.append(f"| `GET {path}` | {n} (x{args.threads}) | {kept.rps:,.0f} | {kept.p50_ms:.2f} | "
                         f"{kept.p99_ms:.2f} | {kept.cpu_us:.0f} | {speedup:.2f} |")
            notes.append(f"api {name}, {n} worker(s), req/s per round: " + ", ".join(f"{r.rps:,.0f}" for r in runs[(name, n)]))
    notes.append(f"api: wrk -t1 -c{args.connections} -d{args.duration}s after {args.warmup}s warm-up; "
                 f"{args.products:,} products; speed-up = median of per-round ratios to 1 worker")
    return lines, notes


# -- webhooks -------------------------------------------------------------------------------------


def _set_workers(system: Stack, stack: ExitStack, count: int) -> None:
    while len(system.workers) > count:
        system.stop_last_worker()
    if len(system.workers) < count:
        system.start_workers(stack, count - len(system.workers))


def _engine_round(system: Stack, arrivals: Arrivals, body: str, count: int) -> Measured:
    system.settle()
    before = system.cpu()
    ids, committed = insert_deliveries(system.dispatcher_url, system.organization_id, system.endpoint_id, count,
                                       body, waiting_for_retry=False)
    commits = dict.fromkeys(ids, committed)
    missing = arrivals.wait_for(commits, max(60.0, count / 20), system.check_alive)
    if missing:
        raise RuntimeError(f"delivery engine: {missing} of {count} deliveries not delivered")
    return measure_result(commits, arrivals, cpu_delta(before, system.cpu()))


def webhooks_scaling(args: argparse.Namespace, counts: list[int], server_url: str) -> tuple[list[str], list[str]]:
    runs: dict[int, list[Measured]] = {n: [] for n in counts}
    with ExitStack() as stack:
        print("webhooks: databases, vhost, CA, receiver ...", flush=True)
        system = build(stack, server_url, args.receiver_workers, args.receiver_threads, None)
        producer = Producer(system.api_url, system.organization_id)
        stack.callback(producer.close)
        body = producer.body().decode()
        arrivals = Arrivals(system.arrivals_dir)
        _set_workers(system, stack, 1)
        _engine_round(system, arrivals, body, 500)  # warm-up: connections, TLS sessions, caches
        for round_no, order in enumerate(_orders(counts, args.rounds), 1):
            for n in order:
                _set_workers(system, stack, n)
                m = _engine_round(system, arrivals, body, args.deliveries)
                runs[n].append(m)
                cpu = ", ".join(f"{k} {v:.0f}" for k, v in m.cpu_us.items() if k in ("workers", "receiver", "postgres"))
                print(f"  round {round_no} {n} worker(s) {m.rate:8,.0f} deliveries/s  (CPU µs/delivery: {cpu})", flush=True)
        system.stop_workers()
    lines = [
        "| delivery engine | deliveries/s | speed-up over 1 | CPU µs/delivery: workers | receiver | PostgreSQL |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for n in counts:
        kept = _median(runs[n], lambda m: m.rate)
        speedup = _paired(runs[n], runs[counts[0]], lambda m: m.rate)
        lines.append(f"| {n} worker process(es) | {kept.rate:,.0f} | {speedup:.2f} | {kept.cpu_us['workers']:,.0f} | "
                     f"{kept.cpu_us['receiver']:,.0f} | {kept.cpu_us['postgres']:,.0f} |")
        notes.append(f"webhooks {n} worker(s), deliveries/s per round: " + ", ".join(f"{m.rate:,.0f}" for m in runs[n]))
    notes.append(f"webhooks: {args.deliveries:,} due deliveries per round committed in one transaction; receiver gunicorn "
                 f"gthread {args.receiver_workers}x{args.receiver_threads} over TLS; WEBHOOK_DELIVERY_CONCURRENCY default (16)")
    return lines, notes


def _median(results: list, key: Callable) -> object:
    return sorted(results, key=key)[len(results) // 2]


def _paired(these: list, ones: list, key: Callable) -> float:
    return statistics.median(key(a) / key(b) for a, b in zip(these, ones))


def main() -> int:
    args = parse_args()
    counts = [int(c) for c in args.processes.split(",")]
    if args.only != "webhooks":
        require_wrk()
    signal.signal(signal.SIGALRM, _abort)
    signal.signal(signal.SIGTERM, _abort)
    signal.alarm(args.deadline)
    server_url = os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)
    command = shlex.join([os.path.relpath(sys.executable), "bench/scaling.py", *sys.argv[1:]])
    started, load_before = time.monotonic(), load_average()
    sections, notes = [], []
    if args.only != "webhooks":
        lines, more = api_scaling(args, counts, server_url)
        sections += ["## api: gunicorn worker processes", "", *lines, ""]
        notes += more
    if args.only != "api":
        lines, more = webhooks_scaling(args, counts, server_url)
        sections += ["## Webhook delivery engine: worker processes", "", *lines, ""]
        notes += more
    signal.alarm(0)
    info = machine(server_url)
    out = [f"# Scaling run {info['date']}", "", "## Machine", "", *(f"- {k}: {v}" for k, v in info.items()), "",
           "## Setup", "", f"- command: {command}", f"- code: {git_revision()}", f"- postgres: {server_version(server_url)}",
           f"- load average (1 min) before / after: {load_before} / {load_average()}",
           f"- duration: {time.monotonic() - started:.0f} s", "", *sections, "## Notes", "", *(f"- {n}" for n in notes)]
    text = "\n".join(out) + "\n"
    print("\n" + text)
    if not args.no_write:
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"{datetime.now().astimezone().date().isoformat()}-scaling.md"
        path.write_text(text)
        print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
