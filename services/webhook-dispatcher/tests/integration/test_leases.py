"""Leases: workers share the queue without sending an attempt twice at once, a lost lease records
nothing, and a worker killed mid-attempt has its work taken up by another after the lease, as the next
attempt (every claim counts one: the attempt cut short was started); a cut-short 8th attempt makes
no ninth."""

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from dps_webhooks.db.deliveries import claim_due
from dps_webhooks.db.models import WebhookDelivery
from dps_webhooks.domain.attempt_outcome import AttemptResult, DeliveryStatus, EndpointEffect, Outcome
from dps_webhooks.services.recording import INTERRUPTED, Finished, LeaseLost, record_outcome, record_outcomes

from webhook_helpers import Store, running_worker, webhook_database

WORKER_CLI = str(Path(sys.executable).with_name("dealpricing-webhooks"))
QUICK = {"WEBHOOK_RETRY_JITTER": "0", "WEBHOOK_POLL_INTERVAL_SECONDS": "0.05"}


@pytest.fixture(scope="module")
def database():
    with webhook_database() as url:
        yield url


@pytest.fixture(scope="module")
def store(make_settings, database):
    store = Store(make_settings(DATABASE_URL=database))
    yield store
    store.close()


def test_workers_sharing_the_queue_send_each_attempt_once(store, receiver, make_settings, database):
    endpoint_id, secret = store.endpoint(receiver.url("/shared"))
    receiver.secrets.append(secret)
    deliveries = [store.event_for(endpoint_id)[1] for _ in range(150)]
    settings = make_settings(DATABASE_URL=database, WEBHOOK_DELIVERY_CONCURRENCY="4", **QUICK)
    with running_worker(settings), running_worker(settings), running_worker(settings):
        for delivery_id in deliveries:
            store.wait_for_status(delivery_id, "SUCCESS")
    sent = Counter(request.headers["x-service-delivery-id"] for request in receiver.requests_to("/shared"))
    assert sorted(sent) == sorted(str(delivery_id) for delivery_id in deliveries)
    assert set(sent.values()) == {1}
    assert all(len(store.attempts(delivery_id)) == 1 for delivery_id in deliveries)


def test_a_claimed_delivery_is_not_claimed_again_until_its_lease_ends(store, receiver):
    endpoint_id, _ = store.endpoint(receiver.url("/leased"))
    _, delivery_id = store.event_for(endpoint_id)
    with store.tx() as session:
        [first] = [c for c in claim_due(session, 100, 60) if c.delivery_id == delivery_id]
    with store.tx() as session:
        assert delivery_id not in [c.delivery_id for c in claim_due(session, 100, 60)]
    assert first.attempt == 1


def test_a_worker_whose_lease_ran_out_records_nothing(store, receiver):
    endpoint_id, _ = store.endpoint(receiver.url("/expired"))
    _, delivery_id = store.event_for(endpoint_id)
    with store.tx() as session:
        [stale] = [c for c in claim_due(session, 100, 60) if c.delivery_id == delivery_id]
    store.sql("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = :id", id=delivery_id)  # lease over
    with store.tx() as session:
        [current] = [c for c in claim_due(session, 100, 60) if c.delivery_id == delivery_id]
    assert (stale.attempt, current.attempt) == (1, 2)  # the unrecorded attempt was started: it counts
    failed = Outcome(DeliveryStatus.FAILED, 0.0, EndpointEffect.NONE)
    with pytest.raises(LeaseLost), store.tx() as session:
        record_outcome(session, stale, AttemptResult(500, "late", None, 10), failed, disable_after=20)
    success = Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES)
    with store.tx() as session:
        record_outcome(session, current, AttemptResult(200, "ok", None, 10), success, disable_after=20)
    row = store.delivery_row(delivery_id)
    assert (row["status"], row["last_response_excerpt"], row["claim_token"]) == ("SUCCESS", "ok", None)
    assert [a["response_excerpt"] for a in store.attempts(delivery_id)] == ["ok"]


def test_claims_take_the_most_overdue_first_and_only_what_is_asked(store, receiver):
    endpoint_id, _ = store.endpoint(receiver.url("/order"))
    ids = [store.event_for(endpoint_id)[1] for _ in range(3)]
    store.sql(
        "UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE next_attempt_at IS NOT NULL"
    )
    for minutes, delivery_id in zip((1, 3, 2), ids, strict=True):
        store.sql(
            "UPDATE webhook_deliveries SET next_attempt_at = now() - make_interval(mins => :m) WHERE id = :id",
            m=minutes,
            id=delivery_id,
        )
    with store.tx() as session:
        claimed = claim_due(session, 2, 60)
    assert {c.delivery_id for c in claimed} == {ids[1], ids[2]}  # the two most overdue
    with store.tx.read() as session:
        leased = session.execute(select(WebhookDelivery.claim_token).where(WebhookDelivery.id.in_(ids))).scalars()
        assert sum(token is not None for token in leased) == 2


def test_a_worker_killed_mid_attempt_is_taken_over_after_its_lease(store, receiver, settings_env, database):
    endpoint_id, secret = store.endpoint(receiver.url("/killed", host="localhost"))
    receiver.secrets.append(secret)
    receiver.answer("/killed", "hang", 200)
    env = {
        **os.environ,
        **settings_env,
        **QUICK,
        "DATABASE_URL": database,
        "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "5",
        "WEBHOOK_LEASE_SECONDS": "6",
        "LOG_LEVEL": "WARNING",
    }
    doomed = subprocess.Popen([WORKER_CLI, "worker", "--no-consume"], env=env, stdout=subprocess.DEVNULL)
    try:
        event, delivery_id = store.event_for(endpoint_id)
        receiver.wait_for(1, "/killed", timeout=60)
        doomed.send_signal(signal.SIGKILL)
        assert doomed.wait(timeout=30) == -signal.SIGKILL
    finally:
        if doomed.poll() is None:
            doomed.kill()
    assert store.delivery_row(delivery_id)["status"] == "PENDING"
    rescuer = subprocess.Popen([WORKER_CLI, "worker", "--no-consume"], env=env, stdout=subprocess.DEVNULL)
    try:
        row = store.wait_for_status(delivery_id, "SUCCESS", timeout=60)
        rescuer.send_signal(signal.SIGTERM)
        assert rescuer.wait(timeout=30) == 0  # a clean stop
    finally:
        if rescuer.poll() is None:
            rescuer.kill()
    requests = receiver.requests_to("/killed")
    assert [r.event_id for r in requests] == [str(event.id)] * 2 and all(r.verified for r in requests)
    assert [r.attempt for r in requests] == [1, 2]  # the attempt cut short counts: the next one is 2
    assert row["attempt_count"] == 2
    assert [(a["attempt"], a["response_status"]) for a in store.attempts(delivery_id)] == [(2, 200)]


def test_a_delivery_whose_eighth_attempt_was_cut_short_is_exhausted_without_a_ninth(
    store, receiver, make_settings, database
):
    endpoint_id, secret = store.endpoint(receiver.url("/eighth"))
    receiver.secrets.append(secret)
    _, delivery_id = store.event_for(endpoint_id)
    # as a worker killed while sending the 8th attempt leaves it: claimed (a token), never recorded
    store.sql(
        "UPDATE webhook_deliveries SET status = 'FAILED', attempt_count = 8, claim_token = gen_random_uuid(), "
        "next_attempt_at = now() WHERE id = :id",
        id=delivery_id,
    )
    failures = store.endpoint_row(endpoint_id)["consecutive_failures"]
    with running_worker(make_settings(DATABASE_URL=database, **QUICK)):
        row = store.wait_for_status(delivery_id, "EXHAUSTED")
    assert receiver.requests_to("/eighth") == []
    assert (row["attempt_count"], row["next_attempt_at"], row["claim_token"]) == (8, None, None)
    [attempt] = store.attempts(delivery_id)
    assert (attempt["attempt"], attempt["response_status"]) == (8, None)
    assert attempt["error_message"] == INTERRUPTED
    assert store.endpoint_row(endpoint_id)["consecutive_failures"] == failures + 1


def test_one_batch_of_outcomes_for_an_endpoint_counts_them_in_order_and_disables_it_once(store, receiver):
    endpoint_id, _ = store.endpoint(receiver.url("/batch-down"))
    in_batch = [store.event_for(endpoint_id)[1] for _ in range(41)]
    _, waiting_id = store.event_for(endpoint_id)
    store.sql("UPDATE webhook_deliveries SET attempt_count = 7 WHERE endpoint_id = :id", id=endpoint_id)
    store.sql("UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = :id", id=waiting_id)
    with store.tx() as session:
        claimed = {c.delivery_id: c for c in claim_due(session, 1000, 60) if c.endpoint_id == endpoint_id}
    assert sorted(claimed) == sorted(in_batch) and all(c.attempt == 8 for c in claimed.values())
    exhausted = (AttemptResult(500, "no", None, 5), Outcome(DeliveryStatus.EXHAUSTED, None, EndpointEffect.COUNT_FAILURE))
    success = (AttemptResult(200, "ok", None, 5), Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES))
    failed = (AttemptResult(503, "later", None, 5), Outcome(DeliveryStatus.FAILED, 0.0, EndpointEffect.NONE))
    # 19 exhausted, a success (back to 0), 20 exhausted (disabled at the 20th), a failure with a retry due now
    plan = [exhausted] * 19 + [success] + [exhausted] * 20 + [failed]
    batch = [Finished(claimed[d], result, outcome) for d, (result, outcome) in zip(in_batch, plan, strict=True)]
    with store.tx() as session:
        recorded = record_outcomes(session, batch, disable_after=20)
    assert recorded == batch
    endpoint = store.endpoint_row(endpoint_id)
    assert (endpoint["status"], endpoint["consecutive_failures"]) == ("DISABLED", 20)
    assert endpoint["disabled_reason"] == "Disabled after 20 consecutive failed deliveries."
    rows = [store.delivery_row(d) for d in in_batch]
    assert [row["status"] for row in rows] == ["EXHAUSTED"] * 19 + ["SUCCESS"] + ["EXHAUSTED"] * 20 + ["FAILED"]
    assert all(row["claim_token"] is None and row["next_attempt_at"] is None for row in rows)  # the retry is held
    assert rows[-1]["last_error_message"] == "The receiver answered 503; only 2xx counts as delivered."
    assert store.delivery_row(waiting_id)["next_attempt_at"] is None  # held by the disabling
    assert all([a["attempt"] for a in store.attempts(d)] == [8] for d in in_batch)
