"""``make bench-quotes``: the quote write path by size, against the real api under gunicorn.

Creates a fresh database on DATABASE_URL's server, seeds an organization, its admin key and products
(bench/seed.py), serves ``dps_api.wsgi:create()`` under the production worker (the same gunicorn
settings as bench/run.py) and, one request at a time on one keep-alive connection:

- creates quotes (``POST /external/v1/pricing-quotes``) with 1, 50, 200 and 500 lines, ``--rounds``
  times each, the sizes interleaved within a round (a machine shared with others moves every number);
- reads a 500-line quote (``GET /external/v1/pricing-quotes/{id}``) ``--reads`` times, each followed by
  a read of a 1-line quote (what a read costs whatever its size);
- edits one line of the 500-line quote (``PATCH .../lines/{id}``, which reopens an APPROVED quote)
  and submits it for approval (``POST .../approval``: no rule is set up, so it is APPROVED at once),
  ``--rounds`` times each.

Prints the median (and min, max) client-side latency of each and the targets of issue 19. Every answer
is checked (status, line count). Bounded by --deadline; the server and the database are removed at the
end whatever happens. Speed is measured here and never asserted in tests.
"""

from __future__ import annotations

import argparse
import http.client
import os
import platform
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import orjson
import psycopg
from databases import fresh_database, server_version
from report import load_average
from seed import DEFAULT_SERVER_URL, seed
from servers import HOST, GunicornSettings, Server

import dps_api

QUOTES = "/external/v1/pricing-quotes"
SIZES = (1, 50, 200, 500)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5, help="creates per size, and line edits / submissions")
    p.add_argument("--reads", type=int, default=11, help="reads of the 500-line quote (and of a 1-line one)")
    p.add_argument("--products", type=int, default=5_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--deadline", type=int, default=600, help="seconds after which the run aborts")
    return p.parse_args()


def _abort(signum, frame):
    raise TimeoutError(f"aborted by signal {signum} (deadline or SIGTERM)")


def cpu_ns(pids: list[int]) -> int:
    """CPU time the processes' threads have run, in nanoseconds (``/proc/<pid>/task/*/schedstat``,
    first field: exact, unlike the clock ticks of ``/proc/<pid>/stat``)."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError):
                pass
    return total


class Client:
    """One keep-alive connection; each call returns (parsed body, milliseconds, server CPU milliseconds)."""

    def __init__(self, port: int, key: str, workers: list[int]):
        self._conn = http.client.HTTPConnection(HOST, port, timeout=60)
        self._headers = {"x-api-key": key, "content-type": "application/json"}
        self._workers = workers

    def call(self, method: str, path: str, body: object = None, expect: int = 200) -> tuple[dict, float, float]:
        payload = None if body is None else orjson.dumps(body)
        cpu_before = cpu_ns(self._workers)
        started = time.perf_counter()
        self._conn.request(method, path, body=payload, headers=self._headers)
        answer = self._conn.getresponse()
        raw = answer.read()
        elapsed = (time.perf_counter() - started) * 1000
        cpu = (cpu_ns(self._workers) - cpu_before) / 1e6
        if answer.status != expect:
            raise RuntimeError(f"{method} {path}: {answer.status} (expected {expect}) {raw[:300]!r}")
        return (orjson.loads(raw) if raw else {}), elapsed, cpu


def quotable_products(database_url: str, count: int) -> list[str]:
    """Ids of active products (every seeded product has a USD list price)."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT id FROM products WHERE active ORDER BY id LIMIT %s", (count,)).fetchall()
    if len(rows) < count:
        raise RuntimeError(f"only {len(rows)} active products; seed more (--products)")
    return [str(r[0]) for r in rows]


def quote_body(products: list[str], size: int, round_no: int) -> dict:
    return {
        "name": f"Bench quote {size} lines #{round_no}",
        "currency": "USD",
        "billingFrequency": "ANNUAL",
        "subscriptionTermMonths": 24,
        "lines": [
            {"productId": products[i], "quantity": str(1 + i % 20), **({"discountPercent": "5"} if i % 2 else {})}
            for i in range(size)
        ],
    }


def code_revision() -> str:
    """The commit of the dps_api being measured (PYTHONPATH may point at another work tree), and
    whether that tree had uncommitted changes in services/api."""
    where = Path(dps_api.__file__).parent

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], capture_output=True, text=True, cwd=where).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".")
    return (git("rev-parse", "--short", "HEAD") or "unknown") + (" + uncommitted changes" if dirty else "") + f" ({where})"


def stats(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f} {min(values):8.1f} {max(values):8.1f}"


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGALRM, _abort)
    signal.signal(signal.SIGTERM, _abort)
    signal.alarm(args.deadline)
    server_url = os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)
    load_before = load_average()
    gunicorn = GunicornSettings("edge", args.workers, 4, 5, 1000)
    timings: dict[str, list[float]] = {}
    cpu_ms: dict[str, list[float]] = {}

    def record(name: str, ms: float, cpu: float) -> None:
        timings.setdefault(name, []).append(ms)
        cpu_ms.setdefault(name, []).append(cpu)
    with ExitStack() as stack:
        database_url = stack.enter_context(fresh_database(server_url))
        seeded = seed(database_url, args.products)
        products = quotable_products(database_url, max(SIZES))
        log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        metrics_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-metrics-quotes-"))
        env = {
            "DATABASE_URL": seeded.database_url, "API_KEY_PEPPER": seeded.pepper, "CURSOR_SECRET": secrets.token_hex(32),
            "LOG_LEVEL": "WARNING", "RATE_LIMIT_ORGANIZATION": "off", "RATE_LIMIT_ANONYMOUS": "off",
            "PROMETHEUS_MULTIPROC_DIR": metrics_dir,
        }
        server = Server("api", "dps_api.wsgi:create()", gunicorn, env, log_dir)
        stack.callback(server.stop)
        server.wait_ready("/healthz")
        # a connection per worker would be fairer, but one keep-alive connection stays with one worker,
        # which keeps the run sequential and its caches warm, as a client creating quotes one by one
        client = Client(server.port, seeded.admin_key, server.worker_pids())
        for size in SIZES:  # warm-up: the first request of each shape pays imports and statement caches
            client.call("POST", QUOTES, quote_body(products, size, 0), expect=201)
        big_id = small_id = ""
        for round_no in range(1, args.rounds + 1):
            for size in SIZES:
                body, ms, cpu = client.call("POST", QUOTES, quote_body(products, size, round_no), expect=201)
                if body["lineCount"] != size or len(body["lines"]) != size:
                    raise RuntimeError(f"created {body['lineCount']} lines, sent {size}")
                record(f"create {size} lines", ms, cpu)
                if size == max(SIZES):
                    big_id, big_lines = body["id"], body["lines"]
                if size == min(SIZES):
                    small_id = body["id"]
        for _ in range(args.reads):  # the two sizes interleaved; a 1-line read is the request's fixed cost
            for size, quote_id in ((max(SIZES), big_id), (min(SIZES), small_id)):
                body, ms, cpu = client.call("GET", f"{QUOTES}/{quote_id}")
                if len(body["lines"]) != size:
                    raise RuntimeError(f"read {len(body['lines'])} lines")
                record(f"read {size} lines", ms, cpu)
        for round_no in range(args.rounds):
            line = big_lines[round_no % len(big_lines)]
            _, ms, cpu = client.call("PATCH", f"{QUOTES}/{big_id}/lines/{line['id']}", {"quantity": str(30 + round_no)})
            record(f"edit a line of {max(SIZES)}", ms, cpu)
            # no approval rule fires: the quote is APPROVED at once; the next round's edit reopens it
            body, ms, cpu = client.call("POST", f"{QUOTES}/{big_id}/approval", expect=201)
            if body["status"] != "APPROVED":
                raise RuntimeError(f"submitted: {body['status']}")
            record(f"submit {max(SIZES)} lines", ms, cpu)
    signal.alarm(0)

    median = {name: statistics.median(values) for name, values in timings.items()}
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown")
    print(f"\nquote sizes: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores {cpu}, "
          f"Python {platform.python_version()}, code {code_revision()}, PostgreSQL {server_version(server_url)}, load average {load_before} -> {load_average()}")
    print(f"gunicorn {gunicorn.describe()}; one keep-alive connection, one request at a time\n")
    print(f"{'request':28} {'median ms':>9} {'min':>8} {'max':>8}   n   server CPU ms (median)")
    for name, values in timings.items():
        print(f"{name:28} {stats(values)} {len(values):3}   {statistics.median(cpu_ms[name]):8.1f}")
    ratio = median["create 500 lines"] / median["create 1 lines"]
    checks = [
        ("create 500 lines <= 100 ms", median["create 500 lines"], median["create 500 lines"] <= 100),
        ("create 500 / create 1 <= 8", ratio, ratio <= 8),
        ("read 500 lines <= 10 ms", median["read 500 lines"], median["read 500 lines"] <= 10),
    ]
    print()
    for name, value, ok in checks:
        print(f"{name:28} {value:8.1f}   {'PASS' if ok else 'MISS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
