"""The edge worker (gevent) against the gthread worker it replaced, interleaved on the same machine
minutes: the bare app and the api's ``GET /whoami`` under each, round after round.

    .venv/bin/python bench/worker_ab.py [--rounds 4 --duration 5]

A busy shared machine moves ``make bench``'s absolute figures from one run to the next; measuring
both workers in alternation, each round's pair seconds apart, compares them under the same load.
Prints requests/s and server CPU per request of each (median round) and the edge/gthread ratios.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from databases import fresh_database
from load import LoadOptions, measure, require_wrk
from report import load_average, machine
from seed import DEFAULT_SERVER_URL, seed
from servers import GunicornSettings, Server

WHOAMI = "/external/v1/whoami"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--duration", type=int, default=5)
    args = p.parse_args()
    require_wrk()
    options = LoadOptions(args.duration, 2, 16, 1)
    workers = {
        "gthread": GunicornSettings("gthread", worker_connections=11),  # make bench's even-share caps
        "edge": GunicornSettings("edge", worker_connections=9),
    }
    before = load_average()
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with ExitStack() as stack:
        database_url = stack.enter_context(fresh_database(os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)))
        seeded = seed(database_url, 100)
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        servers: dict[tuple[str, str], Server] = {}
        for kind, settings in workers.items():
            metrics = stack.enter_context(tempfile.TemporaryDirectory())
            api_env = {"DATABASE_URL": database_url, "API_KEY_PEPPER": seeded.pepper,
                       "CURSOR_SECRET": secrets.token_hex(32), "LOG_LEVEL": "WARNING"}
            if kind == "edge":  # as production's gunicorn_conf sets it up with the edge worker
                api_env["PROMETHEUS_MULTIPROC_DIR"] = metrics
            apps = (("bare", "bare_app:app", {}, "/"), ("api", "dps_api.wsgi:create()", api_env, "/healthz"))
            for app, spec, env, ready in apps:
                server = Server(f"{app}-{kind}", spec, settings, env, logs)
                stack.callback(server.stop)
                server.wait_ready(ready)
                servers[(app, kind)] = server
        for round_ in range(args.rounds):
            for app, path, headers in (("bare", "/", None), ("api", WHOAMI, {"x-api-key": seeded.admin_key})):
                order = ("gthread", "edge") if round_ % 2 == 0 else ("edge", "gthread")
                for kind in order:
                    server = servers[(app, kind)]
                    r = measure(server.url + path, options, headers, server.cpu_seconds)
                    results.setdefault((app, kind), []).append((r.rps, r.cpu_us))
                    print(f"  round {round_ + 1} {app:5} {kind:8} {r.rps:8,.0f} req/s  {r.cpu_us:6.0f} us/req", flush=True)
    info = machine()
    print(f"\n{info['date']}; {info['nproc']} x {info['cpu']}; load average {before} before, {load_average()} after")
    print("| target | gthread req/s | edge req/s | edge/gthread req/s | gthread CPU µs/req | edge CPU µs/req |")
    print("|---|---:|---:|---:|---:|---:|")
    for app in ("bare", "api"):
        g, e = results[(app, "gthread")], results[(app, "edge")]
        ratio = statistics.median(er[0] / gr[0] for gr, er in zip(g, e))
        print(f"| {app} | {statistics.median(x[0] for x in g):,.0f} | {statistics.median(x[0] for x in e):,.0f} | "
              f"{ratio:.3f} | {statistics.median(x[1] for x in g):.0f} | {statistics.median(x[1] for x in e):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
