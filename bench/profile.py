"""Where the api's time goes under load: py-spy samples one gunicorn api, wrk loads one endpoint.

    make install         # py-spy is pinned in libs/testing (the bench tools); or pass --py-spy PATH
    .venv/bin/python bench/profile.py --path '/external/v1/products?limit=100'

Seeds a fresh database like bench/run.py (same gunicorn settings), records every api worker with
``py-spy record --gil`` (only the thread holding the GIL: Python CPU time) while wrk runs, then
prints the share of samples by package (the innermost frame that belongs to a known package) and
the inclusive share of the request's main steps. Bounded in time; everything stops at the end.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from databases import fresh_database
from load import LoadOptions, run_wrk
from run import rate_limits_env
from seed import DEFAULT_SERVER_URL, seed
from servers import GunicornSettings, Server

# innermost matching frame decides the package ("self" time); order: most specific first
PACKAGES = [
    ("sqlalchemy/orm/", "sqlalchemy.orm (Session)"), ("sqlalchemy/pool/", "sqlalchemy.pool"),
    ("sqlalchemy/engine/", "sqlalchemy.engine (execute, results)"), ("sqlalchemy/sql/", "sqlalchemy.sql (statements, cache keys)"),
    ("sqlalchemy/", "sqlalchemy (other)"), ("psycopg/", "psycopg (driver, row loading)"),
    ("dps_common/json.py", "orjson dumps (response body)"), ("dps_common/ratelimit/", "dps_common.ratelimit"),
    ("dps_common/", "dps_common (middleware, auth, paging)"),
    ("dps_api/", "dps_api (resource, service)"), ("falcon/", "falcon"), ("gunicorn/", "gunicorn (HTTP, sockets)"),
    ("redis/", "redis"), ("limits/", "limits"), ("gevent/", "gevent (hub, locks, sockets)"),
    ("prometheus_client/", "prometheus_client"), ("logging/", "logging"), ("threading.py", "threads, GIL hand-off"),
    ("concurrent/", "threads, GIL hand-off"), ("selectors.py", "gunicorn (HTTP, sockets)"),
]
# inclusive: a sample counts once for each step on its stack (py-spy frames read "Qualified.name (path:line)")
STEPS = [
    ("the WSGI app (falcon App.__call__), the rest is gunicorn", "App.__call__ (falcon/app.py"),
    ("auth middleware", "AuthMiddleware.process_resource ("),
    ("request id + metrics/log middleware", "RequestContext.process_request (|Observability.process_response ("),
    ("Transactions.read enter/exit: Session, pool checkout + pre-ping, BEGIN/COMMIT", "Transactions.read (dps_common/db.py"),
    ("statement building (_select, keyset)", "_select (dps_api/services/catalog.py|keyset (dps_api/db/paging.py"),
    ("_rows: execute + fetch + dicts", "_rows (dps_api/services/catalog.py"),
    ("  of which Connection.execute (compile cache, driver call, result setup)", "Connection.execute (sqlalchemy/engine/base.py"),
    ("  of which Result.all (rows from the driver)", "Result.all (sqlalchemy/engine/result.py"),
    ("page_response (cursor, envelope)", "page_response (dps_common/http/paging.py"),
    ("response JSON (orjson)", "JsonHandler.serialize (dps_common/http/json.py"),
]


def _venv_py_spy() -> str | None:
    """py-spy installed in this venv (libs/testing pins it; the venv's bin is not always on PATH)."""
    path = Path(sys.executable).parent / "py-spy"
    return str(path) if path.exists() else None


def summarise(collapsed: list[str]) -> str:
    packages, steps, total = Counter(), Counter(), 0
    for line in collapsed:
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = stack.split(";")
        label = "other"
        for frame in reversed(frames):
            match = next((name for needle, name in PACKAGES if needle in frame), None)
            if match:
                label = match
                break
        packages[label] += n
        for name, needles in STEPS:
            if any(needle in stack for needle in needles.split("|")):
                steps[name] += n
    out = [f"{total} samples (GIL held)", "", "self time by package:"]
    out += [f"  {100 * n / total:5.1f}%  {name}" for name, n in packages.most_common()]
    out += ["", "inclusive time of the request's steps:"]
    out += [f"  {100 * steps[name] / total:5.1f}%  {name}" for name, _ in STEPS]
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--path", default="/external/v1/products?limit=100")
    p.add_argument("--seconds", type=int, default=15)
    p.add_argument("--products", type=int, default=20_000)
    p.add_argument("--py-spy", default=shutil.which("py-spy") or _venv_py_spy())
    p.add_argument("--limited", action="store_true",
                   help="rate limits on, counted in the local Redis (REDIS_URL) with a quota no run reaches, as "
                        "bench/run.py's 'api whoami limited'; default: off, as its 'api'")
    p.add_argument("--bare", action="store_true",
                   help="profile bench/bare_app.py's GET / instead (what gunicorn and gevent cost a request alone)")
    p.add_argument("--raw", help="also write the collapsed stacks here (flamegraph.pl or speedscope read them)")
    args = p.parse_args()
    if not args.py_spy:
        raise SystemExit("py-spy not found: pip install py-spy (or pass --py-spy PATH)")
    with ExitStack() as stack:
        url = stack.enter_context(fresh_database(DEFAULT_SERVER_URL))
        seeded = seed(url, args.products)
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        env = {"DATABASE_URL": url, "API_KEY_PEPPER": seeded.pepper, "CURSOR_SECRET": seeded.pepper, "LOG_LEVEL": "WARNING",
               "PROMETHEUS_MULTIPROC_DIR": stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-metrics-"))}
        env.update(rate_limits_env(stack) if args.limited else {"RATE_LIMIT_ORGANIZATION": "off", "RATE_LIMIT_ANONYMOUS": "off"})
        api = Server("bare" if args.bare else "api", "bare_app:app" if args.bare else "dps_api.wsgi:create()",
                     GunicornSettings(worker_connections=9), env, logs)  # run.py's
        stack.callback(api.stop)
        api.wait_ready("/" if args.bare else "/healthz")
        options = LoadOptions(args.seconds + 4, 0, 16, 1)
        if args.bare:
            args.path = "/"
        headers = {"x-api-key": seeded.admin_key}
        run_wrk(api.url + args.path, 3, options, headers)  # warm-up
        spies = [
            subprocess.Popen([args.py_spy, "record", "--gil", "--format", "raw", "--rate", "200", "--duration",
                              str(args.seconds), "--pid", str(pid), "--output", str(logs / f"{pid}.txt")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for pid in api.worker_pids()
        ]
        run_wrk(api.url + args.path, args.seconds + 2, options, headers)
        for spy in spies:
            spy.wait(timeout=60)
        collapsed = [line for f in logs.glob("*.txt") if f.stem.isdigit() for line in f.read_text().splitlines() if line]
        if args.raw:
            Path(args.raw).write_text("\n".join(collapsed) + "\n")
        print(f"GET {args.path}, gunicorn {api.name}: " + summarise(collapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
