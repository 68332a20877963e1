"""Recovering an outage and reading the traffic on a committed database, with a real delivery worker and
a real HTTPS receiver that verifies every signature, the API through build_http on its own connections.

An outage: the receiver answers 500, the retry gaps compressed to nothing, so every delivery is
EXHAUSTED and the endpoint, at its failure limit, DISABLED (recovery refused: 409). Re-activated and
the receiver back, one recovery redelivers each exhausted delivery exactly once, oldest first, due at
the recovery pace; a FAILED delivery keeps its own retry; calling again redelivers nothing. The stats
count the attempts the worker made and the time to success of what it delivered."""

from __future__ import annotations

import collections
import statistics
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import falcon.testing
import pytest
from sqlalchemy import select

from dps_webhooks.composition import build_http
from dps_webhooks.db.models import WebhookDelivery

from webhook_helpers import accept_event, incoming, running_worker, webhook_database

BASE = "/external/v1/webhook-configs"
WORKER = {
    "WEBHOOK_RETRY_GAPS_SECONDS": "0,0,0,0,0,0,0",  # the 8 attempts at once: an outage in a second
    "WEBHOOK_RETRY_JITTER": "0",
    "WEBHOOK_POLL_INTERVAL_SECONDS": "0.05",
    "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2",
    "WEBHOOK_DISABLE_AFTER_FAILURES": "12",  # the outage's last exhausted delivery disables the endpoint
    "WEBHOOK_DELIVERY_CONCURRENCY": "1",  # one send at a time: the receiver sees them in due order
}
OUTAGE = 12  # deliveries exhausted: the failure limit


@pytest.fixture(scope="module")
def settings_for(make_settings):
    with webhook_database("dps_wh_recover") as url:
        yield lambda **env: make_settings(DATABASE_URL=url, **env)


@pytest.fixture(scope="module")
def client(settings_for):
    app = build_http(settings_for())  # its own transactions: it sees what the worker committed
    yield falcon.testing.TestClient(app)
    app.context.tx.dispose()


@pytest.fixture
def tenant(fake_api):
    return fake_api.provisioned(f"Recover {uuid.uuid4().hex[:8]}")


def register(client, tenant, receiver, path):
    resp = client.simulate_post(
        BASE, json={"url": receiver.url(path, host="localhost")}, headers=tenant.admin.headers
    )
    assert resp.status_code == 201, resp.json
    receiver.secrets.append(resp.json["secret"])
    return resp.json


def deliveries(store, endpoint_id):
    with store.tx.read() as session:
        return session.execute(
            select(WebhookDelivery.__table__)
            .where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint_id))
            .order_by(WebhookDelivery.created_at, WebhookDelivery.id)
        ).all()


def publish(store, tenant, count):
    """``count`` events, each accepted in its own transaction (so its own creation time); in order."""
    events = []
    for _ in range(count):
        event = incoming(uuid.UUID(tenant.id))
        with store.tx() as session:
            accept_event(session, event)
        events.append(event)
    return events


def recover(client, tenant, endpoint, **body):
    return client.simulate_post(f"{BASE}/{endpoint['id']}/recover", json=body, headers=tenant.admin.headers)


def test_an_outage_is_recovered_once_oldest_first_and_spread(client, store, receiver, settings_for, tenant):
    path = "/outage"
    receiver.answer(path, 500)
    endpoint = register(client, tenant, receiver, path)
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    *events, failed = publish(store, tenant, OUTAGE + 1)
    # the last one FAILED, its next retry an hour off: a recovery leaves it to its own retries
    failed_id = store.delivery_of(failed.id, uuid.UUID(endpoint["id"]))
    store.sql(
        "UPDATE webhook_deliveries SET status = 'FAILED', attempt_count = 3, next_attempt_at = now() + interval '1 hour'"
        " WHERE id = :id",
        id=failed_id,
    )
    with running_worker(settings_for(**WORKER)):
        store.wait_until(
            lambda: all(row.status == "EXHAUSTED" for row in deliveries(store, endpoint["id"]) if row.id != failed_id),
            what="every delivery EXHAUSTED",
        )
    exhausted = [row for row in deliveries(store, endpoint["id"]) if row.id != failed_id]
    assert [row.event_id for row in exhausted] == [event.id for event in events]
    assert all(row.attempt_count == 8 for row in exhausted)
    assert len(receiver.requests_to(path)) == 8 * OUTAGE
    assert store.endpoint_row(uuid.UUID(endpoint["id"]))["status"] == "DISABLED"

    refused = recover(client, tenant, endpoint, since=since)
    assert refused.status_code == 409 and refused.json["code"] == "webhook_config_disabled"
    activated = client.simulate_put(f"{BASE}/{endpoint['id']}", json={"status": "ACTIVE"}, headers=tenant.admin.headers)
    assert activated.status_code == 200
    receiver.answer(path, 200)  # the receiver is back
    answer = recover(client, tenant, endpoint, since=since)
    assert answer.status_code == 202, answer.json
    assert (answer.json["recovered"], answer.json["hasMore"]) == (OUTAGE, False)
    new = [row for row in deliveries(store, endpoint["id"]) if row.retry_of is not None]
    assert sorted(row.retry_of for row in new) == sorted(row.id for row in exhausted)
    by_due = sorted(new, key=lambda row: row.next_attempt_at)
    origin = {row.id: row.event_id for row in exhausted}
    assert [origin[row.retry_of] for row in by_due] == [event.id for event in events]  # oldest first
    # due 1/20 s apart (WEBHOOK_RECOVER_PER_SECOND's default), not all at once
    assert {(b.next_attempt_at - a.next_attempt_at).total_seconds() for a, b in zip(by_due, by_due[1:])} == {0.05}

    with running_worker(settings_for(**WORKER)):
        store.wait_until(
            lambda: all(store.delivery_row(row.id)["status"] == "SUCCESS" for row in new), what="every recovery delivered"
        )
        again = recover(client, tenant, endpoint, since=answer.json["since"], until=answer.json["until"])
        assert again.status_code == 202 and again.json["recovered"] == 0
    after_outage = receiver.requests_to(path)[8 * OUTAGE :]
    delivered = [request for request in after_outage if request.event_id != str(failed.id)]
    assert all(request.verified for request in delivered)
    # each exhausted event exactly once, in the order the events were made, as a new delivery
    assert [request.event_id for request in delivered] == [str(event.id) for event in events]
    assert {request.headers["x-service-delivery-id"] for request in delivered} == {str(row.id) for row in new}
    # the FAILED one: not recovered; its own retry, held while DISABLED, was released by the re-activation
    assert failed_id not in {row.retry_of for row in new}
    [own_retry] = [request for request in after_outage if request.event_id == str(failed.id)]
    assert (own_retry.headers["x-service-delivery-id"], own_retry.attempt) == (str(failed_id), 4)
    assert all(row.status == "EXHAUSTED" for row in deliveries(store, endpoint["id"]) if row.id in origin)


def test_stats_count_the_workers_attempts_and_its_time_to_success(client, store, receiver, settings_for, tenant):
    path = "/flaky"
    receiver.answer(path, 500, 503, 200)  # the first delivery's first two attempts fail
    endpoint = register(client, tenant, receiver, path)
    publish(store, tenant, 3)
    settings = {**WORKER, "WEBHOOK_DISABLE_AFTER_FAILURES": "20"}
    with running_worker(settings_for(**settings)):
        store.wait_until(
            lambda: all(row.status == "SUCCESS" for row in deliveries(store, endpoint["id"])), what="all delivered"
        )
    rows = deliveries(store, endpoint["id"])
    answer = client.simulate_get(f"{BASE}/{endpoint['id']}/stats", headers=tenant.admin.headers)
    assert answer.status_code == 200, answer.json
    stats = answer.json
    assert (stats["succeeded"], stats["failed"]) == (3, 2)
    assert sum(h["succeeded"] for h in stats["hours"]) == 3 and sum(h["failed"] for h in stats["hours"]) == 2
    # against the rows: from creation to the successful attempt's answer, percentile_cont's interpolation
    times = sorted(
        (row.last_attempted_at - row.created_at).total_seconds() * 1000 + row.last_duration_ms for row in rows
    )
    p95 = times[1] + 0.9 * (times[2] - times[1])  # rank 0.95 * 2 = 1.9
    assert stats["timeToSuccessMs"] == {"p50": round(statistics.median(times)), "p95": round(p95)}
    week = client.simulate_get(f"{BASE}/{endpoint['id']}/stats?window=7d", headers=tenant.admin.headers).json
    assert (week["succeeded"], week["failed"], week["timeToSuccessMs"]) == (3, 2, stats["timeToSuccessMs"])


def test_two_recoveries_at_once_redeliver_each_delivery_once(client, store, tenant):
    """The endpoint's row is locked for a recovery: the second waits, then finds the first's work done."""
    endpoint = client.simulate_post(
        BASE, json={"url": "https://localhost:9/never"}, headers=tenant.admin.headers
    ).json  # nothing is sent: no worker runs here
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    publish(store, tenant, 300)
    store.sql(
        "UPDATE webhook_deliveries SET status = 'EXHAUSTED', attempt_count = 8, next_attempt_at = NULL"
        " WHERE endpoint_id = :id",
        id=uuid.UUID(endpoint["id"]),
    )
    start = threading.Barrier(2)

    def call() -> dict:
        start.wait()
        resp = recover(client, tenant, endpoint, since=since)
        assert resp.status_code == 202, resp.json
        return resp.json

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: call(), range(2)))
    assert sorted(answer["recovered"] for answer in answers) == [0, 300]
    rows = deliveries(store, endpoint["id"])
    retried = collections.Counter(row.retry_of for row in rows if row.retry_of is not None)
    assert len(retried) == 300 and set(retried.values()) == {1}
