"""Metrics beyond HTTP, scraped from a real gunicorn server (multiprocess mode, two workers) with the
production settings: outbox lag from an old unpublished row, the pool's connections per process,
process metrics per pid (master and workers), GC counts, build info and requests in flight."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import uuid4

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine

from dps_common.db import Transactions, make_engine
from dps_common.outbox import outbox_table  # noqa: F401  (the table the row goes into)
from dps_common.outbox.migration import create_outbox_current
from dps_common.outbox.table import OUTBOX
from dps_common.runtime_metrics import MeteredQueuePool
from dps_testing.migrations import migrated
from dps_testing.processes import free_port, wait_healthy
from dps_testing.services import fresh_database

APP = '''
import falcon

from dps_common import logs, runtime_metrics
from dps_common.db import Transactions, make_engine
from dps_common.http.health import Metrics
from dps_common.http.middleware import Observability, RequestContext
from dps_common.outbox.lag import outbox_lag
import os


def create():
    logs.configure(service="metrics-test", process="http")
    tx = Transactions.for_engine(make_engine(os.environ["DATABASE_URL"], pool_size=2, application_name="metrics-test"))
    runtime_metrics.install("metrics-test", "dps-common")
    runtime_metrics.add_scrape_collector("outbox", outbox_lag("metrics-test", tx))
    app = falcon.App(middleware=[RequestContext(), Observability("metrics-test")])
    app.add_route("/metrics", Metrics())
    app.add_route("/ping", Ping())
    return app


class Ping:
    def on_get(self, req, resp):
        resp.media = {"ok": True}
'''


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with fresh_database("dps_runtime_metrics") as url, migrated(url, create_outbox_current):
        yield url


@pytest.fixture(scope="module")
def server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("metrics-app")
    (folder / "metrics_app.py").write_text(APP)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "HOST": "127.0.0.1", "PORT": str(port),
           "WEB_CONCURRENCY": "2", "PYTHONPATH": str(folder), "BUILD_COMMIT": "abc1234"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log = open(folder / "server.log", "wb")
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "-c", "python:dps_common.gunicorn_conf", "metrics_app:create()"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    origin = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(process, origin, "/metrics")  # a read that times out on a busy machine is waited out too
        yield origin
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def samples(origin: str) -> list[tuple[str, dict[str, str], float]]:
    text = requests.get(origin + "/metrics", timeout=10).text
    return [(s.name, s.labels, s.value) for family in text_string_to_metric_families(text) for s in family.samples]


def value(found: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float | None:
    matches = [v for n, ls, v in found if n == name and labels.items() <= ls.items()]
    return matches[0] if matches else None


def test_outbox_lag_is_the_age_of_the_oldest_unpublished_event(server: str, database_url: str) -> None:
    engine = make_engine(database_url, pool_size=1, application_name="metrics-test-writer")
    try:
        with Transactions.for_engine(engine)() as session:
            session.execute(OUTBOX.insert().values(
                id=uuid4(), organization_id=uuid4(), event_type="quote.approved",
                occurred_at=datetime.now(UTC) - timedelta(seconds=600), envelope={},
            ))
        found = samples(server)
        lag = value(found, "dps_outbox_oldest_unpublished_age_seconds", service="metrics-test")
        assert lag is not None and 600 <= lag < 3600
        with Transactions.for_engine(engine)() as session:
            session.execute(OUTBOX.update().values(published_at=datetime.now(UTC)))
        assert value(samples(server), "dps_outbox_oldest_unpublished_age_seconds", service="metrics-test") == 0
    finally:
        engine.dispose()


def test_process_gc_pool_build_and_in_flight_metrics_of_a_multiprocess_server(server: str) -> None:
    for _ in range(4):  # both workers answer some scrapes (and read the database through their pools)
        found = samples(server)
    pids = {labels["pid"] for name, labels, _ in found if name == "process_resident_memory_bytes"}
    assert len(pids) == 3, pids  # the master and two workers, one series each
    assert all(v > 0 for n, _, v in found if n == "process_resident_memory_bytes")
    assert value(found, "process_cpu_seconds_total") is not None
    assert value(found, "python_gc_collections_total", generation="0") is not None
    assert value(found, "dps_build_info", service="metrics-test", commit="abc1234") == 1
    in_use = [(ls, v) for n, ls, v in found if n == "dps_db_pool_connections" and ls.get("state") == "in_use"]
    assert in_use and all(ls["pool"] == "metrics-test" and "pid" in ls for ls, _ in in_use)
    assert value(found, "dps_db_pool_connections", state="waiting") == 0
    assert value(found, "dps_http_requests_in_flight") == 1  # this scrape


def test_every_request_is_counted_once_across_the_workers(server: str) -> None:
    """The workers write prometheus-client's multiprocess files through their own value class
    (``dps_common.edge.metrics.worker_value_class``): every request reaches the server's sums."""
    def ping_samples() -> dict[str, float]:
        return {n + (ls.get("le") or ""): v for n, ls, v in samples(server)
                if ls.get("route") == "/ping" and n.startswith("dps_http_request")}

    before = ping_samples()
    for _ in range(30):  # a connection each: both workers answer some
        assert requests.get(server + "/ping", timeout=10).status_code == 200
    after = ping_samples()
    assert after["dps_http_requests_total"] - before.get("dps_http_requests_total", 0) == 30
    assert after["dps_http_request_duration_seconds_count"] - before.get("dps_http_request_duration_seconds_count", 0) == 30
    assert after["dps_http_request_duration_seconds_bucket+Inf"] - before.get("dps_http_request_duration_seconds_bucket+Inf", 0) == 30
    assert after["dps_http_request_duration_seconds_sum"] > before.get("dps_http_request_duration_seconds_sum", 0)


def test_the_metered_pool_logs_like_sqlalchemys_own_pools(caplog):
    # a process logging at INFO (all of ours) saw "Pool disposed" / "Pool recreating" at every stop
    engine = create_engine("postgresql+psycopg://127.0.0.1/none", poolclass=MeteredQueuePool)
    with caplog.at_level(logging.INFO):
        engine.dispose()
    assert [r.message for r in caplog.records if "Pool" in r.message] == []
