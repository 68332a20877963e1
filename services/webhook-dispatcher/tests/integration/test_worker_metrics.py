"""The worker process's health and metrics (``WEBHOOK_WORKER_METRICS_PORT``): a real
``dealpricing-webhooks worker`` consumes an event from RabbitMQ, delivers it to the HTTPS test
receiver, and its ``/metrics`` and ``/healthz`` say so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID, uuid4

import pytest
import requests

from dps_common.events.envelope import envelope
from dps_common.messaging import EventPublisher, connect
from dps_testing.broker import publish_one
from dps_testing.processes import free_port, scrape, wait_healthy
from dps_testing.services import fresh_vhost
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.adapters.events_queue import events_queue
from dps_webhooks.settings import Settings

from webhook_helpers import Store, webhook_database, worker_process_env

WORKER_CLI = str(Path(sys.executable).with_name("dealpricing-webhooks"))
WAIT_SECONDS = 60
HANG_SECONDS = 5  # the hanging receiver's attempt ends at this deadline


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_wh_metrics") as url:
        yield url


@pytest.fixture(scope="module")
def worker_env(amqp_url: str, tls_files: dict[str, str]) -> Iterator[dict[str, str]]:
    with webhook_database("dps_wh_metrics") as url:
        yield worker_process_env(url, amqp_url, tls_files["ca"])


@pytest.fixture(scope="module")
def store(worker_env: dict[str, str]) -> Iterator[Store]:
    store = Store(Settings.from_env(worker_env))
    yield store
    store.close()


def test_the_worker_serves_its_metrics_and_health(worker_env, store, tls_files, tmp_path) -> None:
    """One event for two endpoints: one answers 200, the other hangs until the attempt's deadline."""
    settings = store.settings
    with connect(settings.amqp_url) as connection:  # the worker's queue, so the event waits for it
        events_queue(settings)(connection.default_channel).declare()
    organization_id = uuid4()
    port = free_port()
    env = {
        **os.environ,
        **worker_env,
        "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": str(HANG_SECONDS),
        "WEBHOOK_WORKER_METRICS_PORT": str(port),
        "WEBHOOK_WORKER_METRICS_HOST": "127.0.0.1",
    }
    origin = f"http://127.0.0.1:{port}"
    health = requests.Session()
    health.trust_env = False
    with Receiver(tls_files) as receiver, open(tmp_path / "worker.log", "wb") as log:
        receiver.answer("/hangs", "hang")
        ok_endpoint, ok_secret = store.endpoint(receiver.url("/answers"), organization_id=organization_id)
        hang_endpoint, hang_secret = store.endpoint(receiver.url("/hangs"), organization_id=organization_id)
        receiver.secrets += [ok_secret, hang_secret]
        worker = subprocess.Popen([WORKER_CLI, "worker"], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_healthy(worker, origin)
            publisher = EventPublisher(settings.amqp_url, settings.events_exchange)
            event = envelope("quote.approved", organization_id, {"total": "10.00"})
            publish_one(publisher, event)
            publisher.close()
            event_id = UUID(str(event["id"]))
            receiver.wait_for(1, "/answers", timeout=WAIT_SECONDS)
            receiver.wait_for(1, "/hangs", timeout=WAIT_SECONDS)
            store.wait_for_status(store.delivery_of(event_id, ok_endpoint), "SUCCESS")
            while_hanging = store.wait_until(
                lambda: (found := scrape(origin)).get('dps_webhooks_attempts_total{status="SUCCESS"}') and found,
                what="the recorded success in /metrics",
            )
            alive_while_hanging = health.get(origin + "/healthz", timeout=5)
            store.wait_for_status(store.delivery_of(event_id, hang_endpoint), "FAILED")
            after = store.wait_until(
                lambda: (found := scrape(origin)).get('dps_webhooks_attempts_total{status="FAILED"}') and found,
                what="the recorded failure in /metrics",
            )
            alive = health.get(origin + "/healthz", timeout=5)
            missing = health.get(origin + "/nothing-here", timeout=5)
        finally:
            worker.send_signal(signal.SIGTERM)
            exit_code = worker.wait(timeout=60)
    assert exit_code == 0, (tmp_path / "worker.log").read_text()[-4000:]
    assert [request.verified for request in receiver.received] == [True, True]
    assert while_hanging["dps_webhooks_attempts_in_flight"] == 1
    assert while_hanging['dps_webhooks_attempts_total{status="FAILED"}'] == 0
    assert alive_while_hanging.status_code == 200
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    assert missing.status_code == 404
    assert after['dps_webhooks_attempts_total{status="SUCCESS"}'] == 1
    assert after['dps_webhooks_attempts_total{status="FAILED"}'] == 1  # the next attempt is 30 s away
    assert after['dps_webhooks_attempts_total{status="EXHAUSTED"}'] == 0
    assert after["dps_webhooks_attempts_in_flight"] == 0
    assert after["dps_webhooks_attempt_duration_seconds_count"] == 2
    assert after["dps_webhooks_attempt_duration_seconds_sum"] >= HANG_SECONDS
    assert after["dps_webhooks_events_accepted_total"] >= 1
    assert after["dps_webhooks_deliveries_created_total"] == 2
    # each delivery was either handed to the consuming worker or claimed by its loop
    assert after["dps_webhooks_deliveries_handed_over_total"] + after["dps_webhooks_deliveries_claimed_total"] == 2
    assert after['dps_webhooks_claim_record_transactions_total{result="committed"}'] >= 1
    assert after["dps_webhooks_leases_lost_total"] == 0
    assert after["dps_webhooks_endpoints_disabled_total"] == 0
    assert after['dps_webhooks_events_rejected_total{reason="not_an_envelope"}'] == 0
    with pytest.raises(requests.ConnectionError):  # stopped with the process
        health.get(origin + "/healthz", timeout=5)
