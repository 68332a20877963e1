"""``make bench``: the api against a bare Falcon app and a minimal psycopg handler, same gunicorn settings.

Creates a fresh database on DATABASE_URL's server, seeds an organization, its admin key and 200,000
products, serves the three apps under one set of gunicorn settings and loads each with wrk on
loopback: a warm-up, then the measurement, in interleaved rounds. The table keeps each target's
median round; each ratio is the median over rounds of the ratio within a round (the two ran seconds
apart). Prints requests/s, p50, p99, the ratios and PASS/MISS per target, and writes
bench/results/<date>.md. Bounded by --deadline; the servers and the database are removed at the
end whatever happens.
"""

from __future__ import annotations

import argparse
import http.client
import math
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import quote

import orjson
import redis
from databases import fresh_database, server_version
from load import LoadOptions, LoadResult, measure, require_wrk
from prometheus_client.parser import text_string_to_metric_families
from report import Target, load_average, machine, render, write
from seed import DEFAULT_SERVER_URL, Seeded, seed
from servers import GunicornSettings, Server, get, rss_mb

PRODUCTS = "/external/v1/products"
FIRST_PAGE = f"{PRODUCTS}?limit=100"
WHOAMI = "/external/v1/whoami"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEEP_ITEM = 100_000
OLD = "old "  # servers and targets of --baseline's tree
ABLATED = "api limited without "  # servers of the middleware table
ABLATABLE = ("RequestContext", "AuthMiddleware", "Observability", "RateLimits", "BodyLimit", "IdempotencyMiddleware")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=int, default=6, help="seconds measured per target and round")
    p.add_argument("--warmup", type=int, default=2, help="seconds of load before each measurement")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians are taken over them)")
    p.add_argument("--connections", type=int, default=16, help="wrk connections")
    p.add_argument("--wrk-threads", type=int, default=1)
    p.add_argument("--worker-class", default="edge", choices=["edge", "gthread", "sync"],
                   help="edge: the production worker (dps_common.edge.worker.EdgeWorker, gevent)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=4, help="threads per worker (gthread)")
    p.add_argument("--keepalive", type=int, default=5)
    p.add_argument("--worker-connections", type=int, default=None,
                   help="per-worker connection cap; default: an even share of --connections + threads - 1")
    p.add_argument("--products", type=int, default=200_000)
    p.add_argument("--deadline", type=int, default=1200, help="seconds after which the run aborts")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/")
    p.add_argument("--baseline", type=Path, default=None, metavar="TREE",
                   help="also serve the api from this work tree (git worktree add /tmp/old <rev>) and load it in the "
                        "same rounds, alternating which of the two goes first: before/after in one run")
    p.add_argument("--tree", type=Path, default=None, metavar="TREE",
                   help="serve every server but the baseline's from this work tree's code (a commit, without the "
                        "checkout's uncommitted changes) instead of the installed packages")
    p.add_argument("--no-gc", action="store_true", help="do not record the workers' garbage collections")
    p.add_argument("--middleware-rounds", type=int, default=3,
                   help="rounds of the middleware table: whoami (limits on) with each middleware switched off in turn "
                        "(bench/ablated_app.py), its CPU per request against the whole api's; 0: left out")
    p.add_argument("--log-dir", type=Path, default=None,
                   help="keep the servers' logs here (default: a temporary directory, removed at the end)")
    p.add_argument("--only", default="", metavar="NAMES",
                   help="comma-separated targets to load, e.g. 'bare,api whoami,api whoami limited' (the rate-limit "
                        "ratios); the others' ratios are left out. Default: all")
    return p.parse_args()


def _abort(signum, frame):
    raise TimeoutError(f"aborted by signal {signum} (deadline or SIGTERM)")


def page(port: int, path: str, key: str) -> dict:
    status, body = get(port, path, {"x-api-key": key}, timeout=30)
    if status != 200:
        raise RuntimeError(f"GET {path}: {status} {body[:300]!r}")
    return orjson.loads(body)


def deep_page_url(port: int, key: str, item: int) -> str:
    """Walks the list with the api's own cursors to the page that starts at ``item`` (0-based).

    Walks 500 at a time (the maximum) when the api accepts that cursor on a 100-item page, else 100."""
    for step in (500, 100):
        cursor, seen = None, 0
        while seen < item:
            size = min(step, item - seen)
            body = page(port, f"{PRODUCTS}?limit={size}" + (f"&cursor={quote(cursor)}" if cursor else ""), key)
            seen += len(body["products"])
            cursor = body["nextCursor"]
            if cursor is None:
                raise RuntimeError(f"the list ended after {seen} items, before item {item}")
        url = f"{FIRST_PAGE}&cursor={quote(cursor)}"
        status, _ = get(port, url, {"x-api-key": key}, timeout=30)
        if status == 200:
            return url
    raise RuntimeError("no cursor walk reached the deep page")


def rate_limits_env(stack: ExitStack) -> dict[str, str]:
    """The api with its rate limits on, counted in Redis (REDIS_URL, default the local one) under a
    key prefix of this run's, deleted at the end; a quota no run reaches, so every request does the
    whole work (the take, the headers) and none is refused (wrk fails a run on any 4xx)."""
    url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    prefix = f"dps-bench-{secrets.token_hex(4)}"

    def forget() -> None:
        client = redis.Redis.from_url(url)
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)

    stack.callback(forget)
    return {"REDIS_URL": url, "RATE_LIMIT_KEY_PREFIX": prefix,
            "RATE_LIMIT_ORGANIZATION": "1000000/second", "RATE_LIMIT_ANONYMOUS": "1000000/second"}


def store_takes(server: Server) -> str:
    """How many requests of the rate-limited api went to Redis (the rest were decided from a lease or
    a remembered refusal), from its metrics (all workers')."""
    status, body = get(server.port, "/metrics")
    totals = {"decisions": 0.0, "takes": 0.0}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == "dps_rate_limit_decisions_total" and sample.labels.get("outcome") != "unchecked":
                totals["decisions"] += sample.value
            elif sample.name == "dps_rate_limit_store_takes_total":
                totals["takes"] += sample.value
    share = totals["takes"] / max(totals["decisions"], 1)
    return (f"rate-limited api: {totals['decisions']:,.0f} requests checked, {totals['takes']:,.0f} round trips to Redis "
            f"({100 * share:.1f} %; the others spent leased units)")


def start_servers(stack: ExitStack, gunicorn: GunicornSettings, seeded: Seeded, log_dir: Path,
                  baseline: Path | None, gc: bool, tree: Path | None = None, ablations: bool = False) -> dict[str, Server]:
    common = {"LOG_LEVEL": "WARNING"}
    floor_env = {"DATABASE_URL": seeded.database_url, "BENCH_ORG_ID": str(seeded.organization_id)}
    # the key cache's longest TTL: its reload (once a minute per worker by default) is the only database
    # read of whoami, and another session killing connections on the shared server then made it a 503
    # that failed the run; a reload a minute is no measurable part of a request's CPU either way
    api_env = {"DATABASE_URL": seeded.database_url, "API_KEY_PEPPER": seeded.pepper, "CURSOR_SECRET": secrets.token_hex(32),
               "KEY_CACHE_TTL_SECONDS": "600"}
    limited_env = {**api_env, **rate_limits_env(stack)}
    apps = (
        ("bare", "bare_app:app", {}, "/"),
        ("psycopg", "psycopg_app:app", floor_env, "/products"),
        ("api", "dps_api.wsgi:create()", {**api_env, "RATE_LIMIT_ORGANIZATION": "off", "RATE_LIMIT_ANONYMOUS": "off"},
         "/healthz"),
        ("api limited", "dps_api.wsgi:create()", limited_env, "/healthz"),
    )
    if baseline is not None:  # the same two apis from the old tree
        apps += tuple((OLD + name, spec, env, ready) for name, spec, env, ready in apps if name.startswith("api"))
    if ablations:  # the limited api with one middleware off each (bench/ablated_app.py), this tree's code
        apps += tuple((ABLATED + name, f'ablated_app:create("{name}")', {**limited_env, "BENCH_API_KEY": seeded.admin_key},
                       "/healthz") for name in ABLATABLE)
    servers = {}
    for name, spec, env, _ in apps:
        # metrics in prometheus-client's multiprocess mode, as production's gunicorn_conf sets up
        metrics_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"bench-metrics-{name.replace(' ', '-')}-"))
        server = Server(name, spec, gunicorn, {**common, **env, "PROMETHEUS_MULTIPROC_DIR": metrics_dir}, log_dir,
                        code=baseline if name.startswith(OLD) else tree,
                        gc_dir=log_dir / f"gc-{name.replace(' ', '-')}" if gc else None)
        stack.callback(server.stop)  # registered at once: stopped whatever happens next
        servers[name] = server
    for name, _, _, ready in apps:
        servers[name].wait_ready(ready)
    return servers


def checks(servers: dict[str, Server], key: str, deep_item: int) -> tuple[str, list[str]]:
    """The floor returns the api's items, and the deep page's url (found by walking cursors)."""
    notes = []
    limited = servers["api limited"]
    conn = http.client.HTTPConnection("127.0.0.1", limited.port, timeout=30)
    conn.request("GET", WHOAMI, headers={"x-api-key": key})
    answer = conn.getresponse()
    answer.read()
    conn.close()
    if answer.status != 200 or not (answer.getheader("RateLimit") or "").startswith('"organization"'):
        raise RuntimeError(f"the rate-limited api answered {answer.status} without its RateLimit field")
    notes.append(f"rate-limited api: RateLimit-Policy {answer.getheader('RateLimit-Policy')}, counted in Redis")
    api_items = page(servers["api"].port, FIRST_PAGE, key)["products"]
    if api_items != page(servers["psycopg"].port, "/products", key)["products"]:
        notes.append("WARNING: the psycopg handler's items differ from the api's: the products ratio compares unlike work")
    print(f"walking cursors to item {deep_item:,} ...", flush=True)
    deep_url = deep_page_url(servers["api"].port, key, deep_item)
    first = page(servers["api"].port, deep_url, key)["products"][0]["specId"]
    notes.append(f"deep page: found by walking the api's cursors; its first item is {first} (seeded as SPEC-<index>)")
    return deep_url, notes


def run_rounds(plan, rounds: int, options: LoadOptions) -> dict[str, list[LoadResult]]:
    runs: dict[str, list[LoadResult]] = {name: [] for name, *_ in plan}
    for round_no in range(1, rounds + 1):
        print(f"  round {round_no}: load average {load_average()}", flush=True)
        for name, _, server, path, headers in _round_order(plan, round_no):
            before = server.worker_cpu_seconds()
            r = measure(server.url + path, options, headers, server.cpu_seconds)
            split = [after - was for was, after in zip(before, server.worker_cpu_seconds())]
            runs[name].append(r)
            shares = "/".join(f"{100 * x / max(sum(split), 1e-9):.0f}" for x in split)
            print(f"  round {round_no} {name:18} {r.rps:9,.0f} req/s  p50 {r.p50_ms:7.2f} ms  p99 {r.p99_ms:7.2f} ms  "
                  f"server CPU {r.cpu_us:5.0f} us/req  (worker CPU shares {shares} %)", flush=True)
    return runs


def middleware_table(servers: dict[str, Server], rounds: int, options: LoadOptions, auth: dict[str, str]) -> list[str]:
    """What each middleware costs ``GET /whoami`` (limits on): the whole api's server CPU per request
    minus that of the same api with the middleware switched off (median of per-round differences;
    each round loads them all in turn, starting one further along each round)."""
    names = ["bare", "api limited", *(ABLATED + name for name in ABLATABLE)]
    cpu: dict[str, list[float]] = {name: [] for name in names}
    failed: set[int] = set()
    for round_no in range(rounds):
        print(f"  middleware round {round_no + 1}: load average {load_average()}", flush=True)
        for name in names[round_no % len(names):] + names[:round_no % len(names)]:
            server = servers[name]
            try:
                r = measure(server.url + ("/" if name == "bare" else WHOAMI), options, None if name == "bare" else auth,
                            server.cpu_seconds)
            except RuntimeError as exc:  # a failed answer: this round of the table is lost, not the run's figures
                print(f"  middleware round {round_no + 1} {name}: {exc}; round left out (logs: {server.log_path})",
                      flush=True)
                failed.add(round_no)
                cpu[name].append(math.nan)
                continue
            cpu[name].append(r.cpu_us)
            print(f"  middleware round {round_no + 1} {name:44} {r.rps:9,.0f} req/s  server CPU {r.cpu_us:5.0f} us/req",
                  flush=True)
    if len(failed) == rounds:
        return [f"(every round had a failed answer: no table; see {servers['api limited'].log_path.parent})"]
    cpu = {name: [x for i, x in enumerate(xs) if i not in failed] for name, xs in cpu.items()}
    whole = statistics.median(cpu["api limited"])

    def cost(name: str) -> float:
        return statistics.median(a - b for a, b in zip(cpu["api limited"], cpu[name]))

    lines = ["| switched off | server CPU µs/req without it | what it costs whoami, µs/req | share of whoami's CPU |",
             "|---|---:|---:|---:|"]
    costs = {name: cost(ABLATED + name) for name in ABLATABLE}
    for name in ABLATABLE:
        lines.append(f"| {name} | {statistics.median(cpu[ABLATED + name]):.0f} | {costs[name]:+.0f} | "
                     f"{100 * costs[name] / whole:.1f} % |")
    beyond_bare = cost("bare")
    lines += [
        f"| (all six, summed) | | {sum(costs.values()):+.0f} | {100 * sum(costs.values()) / whole:.1f} % |",
        f"| (the rest: falcon's routing and middleware loop, the responder, JSON, gunicorn's work on the larger "
        f"answer) | | {beyond_bare - sum(costs.values()):+.0f} | {100 * (beyond_bare - sum(costs.values())) / whole:.1f} % |",
        f"| whoami, limits on (nothing off) / bare `GET /` | {whole:.0f} / {statistics.median(cpu['bare']):.0f} | "
        f"{beyond_bare:+.0f} beyond bare | |",
    ]
    return lines


def _round_order(plan, round_no: int):
    """The plan, with each old target swapped with the new one before it in every other round (so
    neither always runs first)."""
    order = list(plan)
    if round_no % 2 == 0:
        for i in range(1, len(order)):
            if order[i][0] == OLD + order[i - 1][0]:
                order[i - 1], order[i] = order[i], order[i - 1]
    return order


def targets(runs: dict[str, list[LoadResult]], api_rss: list[float], prefix: str = "") -> list[Target]:
    """The goals (issue 19's where it set them), for the api of this tree or, with ``prefix`` "old ",
    of the baseline's (against the same bare app and floor of the same rounds)."""
    def paired(num: str, den: str, value) -> float:
        if num not in runs or den not in runs:  # not loaded (--only)
            return math.nan
        return statistics.median(value(a) / value(b) for a, b in zip(runs[num], runs[den]))

    rps, p50, p99, cpu = (lambda r: r.rps), (lambda r: r.p50_ms), (lambda r: r.p99_ms), (lambda r: r.cpu_us)
    api, tag = prefix + "api", prefix
    return [target for target in [
        Target(f"{tag}whoami req/s / bare req/s", paired(f"{api} whoami", "bare", rps), ">=", 0.85),
        Target(f"{tag}whoami rate-limited (Redis) req/s / bare req/s", paired(f"{api} whoami limited", "bare", rps), ">=", 0.80),
        Target(f"{tag}products p99 / psycopg handler p99", paired(f"{api} products", "psycopg handler", p99), "<=", 2.0),
        Target(f"{tag}products req/s / psycopg handler req/s", paired(f"{api} products", "psycopg handler", rps), ">=", 0.80),
        Target(f"{tag}deep page p50 / first page p50", paired(f"{api} products deep", f"{api} products", p50), "<=", 1.2),
        Target(f"{tag}max RSS of one api worker", max(api_rss, default=math.nan), "<", 120, " MB"),
        Target(f"{tag}bare CPU/req / whoami CPU/req", paired("bare", f"{api} whoami", cpu), ">=", 0.85, judged=False),
        Target(f"{tag}bare CPU/req / whoami rate-limited CPU/req", paired("bare", f"{api} whoami limited", cpu), ">=", 0.80,
               judged=False),
        Target(f"{tag}psycopg CPU/req / products CPU/req", paired("psycopg handler", f"{api} products", cpu), ">=", 0.80,
               judged=False),
        Target(f"{tag}deep page p99 / first page p99", paired(f"{api} products deep", f"{api} products", p99), "<=", 1.2,
               judged=False),
        Target(f"{tag}whoami rate-limited req/s / whoami req/s", paired(f"{api} whoami limited", f"{api} whoami", rps), ">=",
               0.90, judged=False),
        Target(f"{tag}server CPU the rate limits add to whoami", _cpu_difference(runs, api), "<=", 50, " us/req",
               judged=False),
    ] + ([] if prefix else [
        Target("psycopg handler req/s / bare req/s", paired("psycopg handler", "bare", rps), ">=", 0.25, judged=False),
    ]) if not math.isnan(target.measured)]


def _cpu_difference(runs: dict[str, list[LoadResult]], api: str = "api") -> float:
    """What the rate limits add to a request's server CPU (median of per-round differences)."""
    if f"{api} whoami limited" not in runs or f"{api} whoami" not in runs:
        return math.nan
    return statistics.median(a.cpu_us - b.cpu_us for a, b in zip(runs[f"{api} whoami limited"], runs[f"{api} whoami"]))


def gc_table(plan, runs: dict[str, list[LoadResult]]) -> list[str]:
    """Each target's garbage collections during its measurements (all rounds): they stop the worker."""
    lines = ["| target | collections per 1,000 requests | GC ms per 1,000 requests | full collections | longest full ms "
             "| longest pause ms |", "|---|---:|---:|---:|---:|---:|"]
    for name, _, server, *_ in plan:
        pauses = [server.gc_pauses(r.window_ns) for r in runs[name]]
        if any(p is None for p in pauses):
            return []
        thousands = sum(r.requests for r in runs[name]) / 1000
        lines.append(f"| {name} | {sum(p.count for p in pauses) / thousands:.1f} | {sum(p.total_ms for p in pauses) / thousands:.2f} "
                     f"| {sum(p.full for p in pauses)} | {max(p.full_max_ms for p in pauses):.1f} | {max(p.max_ms for p in pauses):.1f} |")
    return lines


def git_revision(tree: Path | None = None) -> str:
    """The commit measured, and whether the work tree had uncommitted changes (others' work in progress)."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], capture_output=True, text=True, cwd=tree or Path(__file__).parent).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no")
    return (git("rev-parse", "--short", "HEAD") or "unknown") + (" + uncommitted changes" if dirty else "")


def main() -> int:
    args = parse_args()
    require_wrk()
    signal.signal(signal.SIGALRM, _abort)
    signal.signal(signal.SIGTERM, _abort)
    signal.alarm(args.deadline)
    # wrk opens its connections in one burst and keep-alive pins each to the worker that accepted it:
    # uncapped, one worker can take them all and the run measures one core. A cap just above an even
    # share splits them evenly (and keeps worker_connections - threads keep-alive slots free).
    # (gevent's pool counts connections only: an even share plus one spare)
    even_share = -(-args.connections // args.workers) + (1 if args.worker_class == "edge" else args.threads - 1)
    gunicorn = GunicornSettings(
        args.worker_class, args.workers, args.threads, args.keepalive, args.worker_connections or even_share
    )
    options = LoadOptions(args.duration, args.warmup, args.connections, args.wrk_threads)
    server_url = os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)
    started, load_before = time.monotonic(), load_average()
    print(f"bench: gunicorn {gunicorn.describe()}; wrk -t{options.threads} -c{options.connections} "
          f"-d{options.duration}s (+{options.warmup}s warm-up) x {args.rounds} rounds", flush=True)
    with ExitStack() as stack:
        database_url = stack.enter_context(fresh_database(server_url))
        print(f"seeding {args.products:,} products ...", flush=True)
        seeded = seed(database_url, args.products)
        baseline = args.baseline.resolve() if args.baseline else None
        log_dir = args.log_dir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        log_dir.mkdir(parents=True, exist_ok=True)
        servers = start_servers(stack, gunicorn, seeded, log_dir,
                                baseline, not args.no_gc, args.tree.resolve() if args.tree else None,
                                ablations=args.middleware_rounds > 0)
        deep_item = min(DEEP_ITEM, args.products // 2)
        deep_url, notes = checks(servers, seeded.admin_key, deep_item)
        auth = {"x-api-key": seeded.admin_key}
        plan = [
            ("bare", "GET /", servers["bare"], "/", None),
            ("api whoami", f"GET {WHOAMI} (rate limits off)", servers["api"], WHOAMI, auth),
            ("api whoami limited", f"GET {WHOAMI} (rate limits on, Redis)", servers["api limited"], WHOAMI, auth),
            ("psycopg handler", "GET /products (same 100 rows)", servers["psycopg"], "/products", None),
            ("api products", f"GET {FIRST_PAGE}", servers["api"], FIRST_PAGE, auth),
            ("api products deep", f"GET {FIRST_PAGE}&cursor=<item {deep_item:,}>", servers["api"], deep_url, auth),
        ]
        if baseline is not None:  # each old target right after its new one (run_rounds alternates the two)
            plan = [step for new in plan for step in [new] + (
                [(OLD + new[0], f"{new[1]} from {baseline}", servers[OLD + new[2].name], *new[3:])]
                if new[0].startswith("api") and not new[0].endswith("deep") else [])]
        if args.only:
            wanted = {name.strip() for name in args.only.split(",")}
            unknown = wanted - {name for name, *_ in plan}
            if unknown:
                raise SystemExit(f"--only: no target named {', '.join(sorted(unknown))}")
            plan = [step for step in plan if step[0] in wanted]
        runs = run_rounds(plan, args.rounds, options)
        sections = []
        if args.middleware_rounds > 0:
            sections.append(("What each middleware costs `GET /whoami` (rate limits on), from a server with it "
                             f"switched off (bench/ablated_app.py; {args.middleware_rounds} rounds, medians)",
                             middleware_table(servers, args.middleware_rounds, options, auth)))
        notes.append(store_takes(servers["api limited"]))
        if baseline is not None:
            notes.append(OLD + store_takes(servers[OLD + "api limited"]))
        rss = {name: [rss_mb(pid) for pid in server.worker_pids()] for name, server in servers.items()}
        for server in servers.values():
            server.stop()  # the workers write their garbage collections as they exit
        gc_lines = gc_table(plan, runs)
        # reported before the database is dropped (at the block's end): a drop that waits on the server
        # (another session holding a barrier) must not cost the run its figures
        notes.append("worker RSS after the load (MB): " + "; ".join(f"{k} {', '.join(f'{v:.1f}' for v in vs)}" for k, vs in rss.items()))
        notes += [f"{name} req/s per round: {', '.join(f'{r.rps:,.0f}' for r in rs)}" for name, rs in runs.items()]
        kept = {name: sorted(rs, key=lambda r: r.rps)[len(rs) // 2] for name, rs in runs.items()}
        info = machine()
        setup = {
            "gunicorn": gunicorn.describe() + " (same for all four)",
            "wrk": f"-t{options.threads} -c{options.connections} -d{options.duration}s after {options.warmup}s warm-up, "
                   f"{args.rounds} interleaved rounds; table: median round; ratios: median of per-round ratios",
            "data": f"{args.products:,} products in one organization; admin key (inactive products and cost included)",
            "postgres": server_version(server_url),
            "code": git_revision(args.tree) + (f" (served from {args.tree})" if args.tree else ""),
            "load average (1 min) before / after": f"{load_before} / {load_average()}",
            **({"baseline": f"the api also served from {baseline} ({git_revision(baseline)}), loaded right after "
                            "(odd rounds) or before (even rounds) this tree's"} if baseline else {}),
            "duration": f"{time.monotonic() - started:.0f} s",
        }
        judged = targets(runs, rss["api"]) + (targets(runs, rss[OLD + "api"], OLD) if baseline else [])
        text = render(info, setup, [(name, request, kept[name]) for name, request, *_ in plan], judged, notes, gc_lines, sections)
        print("\n" + text)
        if not args.no_write:
            print(f"written to {write(text, info['date'])}")
    signal.alarm(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
