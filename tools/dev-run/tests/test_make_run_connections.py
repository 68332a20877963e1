"""The database connections a running ``make run`` holds, counted by PostgreSQL (pg_stat_activity, by
each process's application_name) after a busy moment: the whole system, with its default two gunicorn
workers per service, holds fewer than 25, a quarter of PostgreSQL's default 100 (README, "Database
connections")."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from make_run import MakeRun

BUDGET = 25  # a quarter of PostgreSQL's default max_connections
SETTLE_SECONDS = 3  # the relays publish, the dispatcher's consumer stores: then every process is idle


@pytest.fixture(scope="module")
def running(run_dir, tmp_path_factory):
    run = MakeRun(run_dir, tmp_path_factory.mktemp("make-run-connections") / "make-run.log",
                  WEB_CONCURRENCY="2").start()  # make run's own worker count, not the other tests' one
    yield run
    run.kill_everything()


def _call(method: str, url: str, key: str, body: dict | None = None) -> int:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"x-api-key": key, "content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as answer:  # a problem document: the service answered all the same
        return answer.code


def test_make_run_holds_fewer_than_a_quarter_of_postgres_connections(running: MakeRun) -> None:
    exports = dict(re.findall(r"export (\w+)='?([^'\n]*)'?", running.exports()))
    api, key = exports["API"], exports["DPS_KEY"]
    # every service used once, reads and a write (whose event the relays and the dispatcher then carry)
    for path in ("/whoami", "/opportunities?limit=5", "/products?limit=5", "/webhook-configs"):
        assert _call("GET", api + path, key) == 200
    assert _call("GET", api + "/billing-connection", key) in (200, 404)  # 404 until connected
    assert _call("POST", api + "/opportunities", key, {"name": "Connections", "accountName": "Initech"}) == 201
    with urllib.request.urlopen(api.replace("/external/v1", "/console/sign-in"), timeout=30) as page:
        assert page.status == 200
    # a busy moment: many requests at once open more connections (the pools' overflow), which are
    # closed again once returned; what a pool keeps is its size
    reads = ["/opportunities?limit=5", "/products?limit=5", "/webhook-configs"] * 16
    with ThreadPoolExecutor(max_workers=16) as pool:
        assert set(pool.map(lambda path: _call("GET", api + path, key), reads)) == {200}
    time.sleep(SETTLE_SECONDS)

    admin_env = dict(line.split("=", 1) for line in (running.run_dir / "admin.env").read_text().splitlines()
                     if "=" in line and not line.startswith("#"))
    with psycopg.connect(admin_env["DATABASE_URL"].strip("'\""), autocommit=True,
                         application_name="dps-connection-count") as admin:
        rows = admin.execute(
            "SELECT coalesce(application_name, ''), datname FROM pg_stat_activity"
            " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchall()
    held = Counter(name for name, _ in rows)
    print("\nconnections held by make run, by application_name:")  # the figures (pytest -s)
    for name, count in sorted(held.items()):
        print(f"  {name:40} {count}")
    print(f"  {'total':40} {sum(held.values())}")
    assert all(name.startswith("dps-") for name in held), f"a connection no process named: {held}"
    for process in ("dps-api-http", "dps-webhooks-http", "dps-billing-http"):
        assert held[process] >= 1, f"{process} holds no connection: the count would miss it"
    assert sum(held.values()) < BUDGET, held
