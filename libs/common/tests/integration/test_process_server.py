"""The health and metrics server of the processes that serve no HTTP: a real server on a free port."""

from __future__ import annotations

import logging
import signal
import threading

import pytest
import requests
from prometheus_client import Counter

from dps_common.process_server import Heartbeat, serve_health_and_metrics, worker_process
from dps_testing.processes import free_port

INCREMENTS = Counter("dps_test_process_server_increments_total", "Incremented by the process server's tests")


@pytest.fixture
def http() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # no proxy in the way of 127.0.0.1
    return session


def test_metrics_are_the_default_registrys_text(http) -> None:
    with serve_health_and_metrics("127.0.0.1", free_port(), lambda: None) as server:
        INCREMENTS.inc(3)
        resp = http.get(f"http://127.0.0.1:{server.port}/metrics", timeout=5)
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=")
    samples = dict(line.rsplit(" ", 1) for line in resp.text.splitlines() if not line.startswith("#"))
    assert float(samples["dps_test_process_server_increments_total"]) == 3


def test_health_follows_the_liveness_check(http) -> None:
    reason: list[str | None] = [None]
    with serve_health_and_metrics("127.0.0.1", free_port(), lambda: reason[0]) as server:
        url = f"http://127.0.0.1:{server.port}/healthz"
        alive = http.get(url, timeout=5)
        reason[0] = "the loop has not turned for 31 s"
        stuck = http.get(url, timeout=5)
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    assert stuck.status_code == 503
    assert stuck.json() == {"status": "unavailable", "reason": "the loop has not turned for 31 s"}


def test_a_check_that_raises_is_not_alive(http) -> None:
    def broken() -> str | None:
        raise RuntimeError("boom")

    with serve_health_and_metrics("127.0.0.1", free_port(), broken) as server:
        resp = http.get(f"http://127.0.0.1:{server.port}/healthz", timeout=5)
    assert resp.status_code == 503
    assert resp.json()["reason"] == "the liveness check failed: RuntimeError"


def test_other_paths_are_404_and_other_methods_405(http) -> None:
    with serve_health_and_metrics("127.0.0.1", free_port(), lambda: None) as server:
        origin = f"http://127.0.0.1:{server.port}"
        missing = [http.get(origin + path, timeout=5).status_code for path in ("/", "/readyz", "/metrics/x")]
        posted = http.post(origin + "/healthz", timeout=5)
    assert missing == [404, 404, 404]
    assert (posted.status_code, posted.headers["Allow"]) == (405, "GET")


def test_requests_are_logged_at_debug_only(http, caplog, capfd) -> None:
    caplog.set_level(logging.DEBUG, logger="dps.process_server")
    with serve_health_and_metrics("127.0.0.1", free_port(), lambda: None) as server:
        for _ in range(3):
            http.get(f"http://127.0.0.1:{server.port}/metrics", timeout=5)
    requests_logged = [record for record in caplog.records if record.message == "process server request"]
    assert len(requests_logged) == 3
    assert {record.levelno for record in requests_logged} == {logging.DEBUG}
    assert "GET /metrics" not in capfd.readouterr().err  # not wsgiref's line on stderr either


def test_it_stops_at_the_end_of_the_block(http) -> None:
    port = free_port()
    with serve_health_and_metrics("127.0.0.1", port, lambda: None):
        assert http.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    assert not [thread for thread in threading.enumerate() if thread.name == "process-server"]
    with pytest.raises(requests.ConnectionError):
        http.get(f"http://127.0.0.1:{port}/healthz", timeout=5)


def test_port_0_serves_nothing() -> None:
    with serve_health_and_metrics("127.0.0.1", 0, lambda: None) as server:
        assert server is None
        assert not [thread for thread in threading.enumerate() if thread.name == "process-server"]


def test_a_heartbeat_is_stale_after_five_poll_intervals_and_never_under_30_seconds() -> None:
    now = [1000.0]
    quick, slow = Heartbeat("relay loop", 0.1, clock=lambda: now[0]), Heartbeat("relay loop", 10, clock=lambda: now[0])
    assert (quick.stale_after, slow.stale_after) == (30, 50)
    now[0] += 40
    assert quick.stalled() == "the relay loop has not turned for 40 s"
    assert slow.stalled() is None
    quick.beat()
    now[0] += 20
    assert quick.stalled() is None
    assert slow.stalled() == "the relay loop has not turned for 60 s"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_worker_process_stops_on_a_signal_and_says_so(http, caplog, signum) -> None:
    caplog.set_level(logging.INFO, logger="dps.test.worker")
    port, stopping = free_port(), threading.Event()
    former = signal.getsignal(signum)
    with worker_process("test worker", logging.getLogger("dps.test.worker"), stopping.set, "127.0.0.1", port,
                        lambda: None, concurrency=2):
        assert http.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        signal.raise_signal(signum)  # the handler runs on this (the main) thread before the next line
        assert stopping.is_set()
    lines = [(record.message, getattr(record, "concurrency", None), getattr(record, "signal", None))
             for record in caplog.records if record.name == "dps.test.worker"]
    assert lines == [("test worker started", 2, None), ("test worker stopped", None, signum)]
    assert signal.getsignal(signum) is former
    with pytest.raises(requests.ConnectionError):
        http.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
