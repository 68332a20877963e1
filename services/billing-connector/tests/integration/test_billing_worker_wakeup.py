"""A queued push wakes the workers (``LISTEN``/``NOTIFY`` on ``PUSHES_CHANNEL``): with a 30 s poll, a
push requested while the worker sleeps is still claimed within seconds (the poll stays the fallback:
``dps_common``'s wake-up tests cover a lost notification)."""

from __future__ import annotations

import time

import pytest
import requests

from dps_testing.processes import free_port, wait_healthy

from billing_helpers import connect, line, quote
from push_helpers import request_push, wait_for, worker_process, worker_thread

LONG_POLL = "30"  # far beyond the wait below: only a notification can wake the worker in time
WOKEN_WITHIN = 10.0


@pytest.fixture
def org(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    return org


def test_a_push_requested_while_the_worker_sleeps_is_claimed_before_its_next_poll(served, fake_api, org,
                                                                                   make_settings):
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    with worker_thread(make_settings(PUSH_POLL_INTERVAL_SECONDS=LONG_POLL)):
        time.sleep(1.5)  # the worker has looked for work once and sleeps until its next poll
        push = request_push(served, org.admin.key, snapshot)
        started = wait_for(served, org.user.key, snapshot.id, push["id"], done=lambda p: p["status"] != "queued",
                           timeout=WOKEN_WITHIN)
        assert started["status"] in ("running", "succeeded")
        done = wait_for(served, org.user.key, snapshot.id, push["id"], timeout=WOKEN_WITHIN)
    assert done["status"] == "succeeded", done



def test_the_worker_serves_its_health_and_metrics_while_its_loop_turns(settings_env, tmp_path):
    """``BILLING_WORKER_METRICS_PORT``: the probes and the scraper of a deployment reach the worker."""
    port = free_port()
    worker = worker_process({**settings_env, "BILLING_WORKER_METRICS_PORT": str(port)}, tmp_path / "worker.log")
    origin = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(worker, origin)  # /healthz answers 200
        assert "process_cpu_seconds_total" in requests.get(origin + "/metrics", timeout=10).text
    finally:
        worker.terminate()
        assert worker.wait(timeout=30) == 0
