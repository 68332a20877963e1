"""Retention: deliveries (with their attempts) and unreferenced events past the period are deleted,
in batches, and nothing younger."""

import threading

import pytest
from sqlalchemy import text

from dps_webhooks.delivery.retention import purge_expired, run_retention
from dps_webhooks.services.intake import store_event

from webhook_helpers import Store, incoming, webhook_database


@pytest.fixture(scope="module")
def store(make_settings):
    with webhook_database() as url:
        store = Store(make_settings(DATABASE_URL=url))
        yield store
        store.close()


def age(store, delivery_id, days):
    store.sql(
        "UPDATE webhook_deliveries SET created_at = now() - make_interval(days => :d) WHERE id = :id",
        d=days,
        id=delivery_id,
    )


def count(store, table, **where):
    with store.tx.read() as session:
        clause = " AND ".join(f"{column} = :{column}" for column in where) or "true"
        return session.execute(text(f"SELECT count(*) FROM {table} WHERE {clause}"), where).scalar_one()


def test_old_deliveries_attempts_and_unreferenced_events_go_and_the_rest_stays(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/in")
    old_event, old_delivery = store.event_for(endpoint_id)
    shared_event, young_delivery = store.event_for(endpoint_id)
    new_event, new_delivery = store.event_for(endpoint_id)
    store.sql(
        "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
        " VALUES (gen_random_uuid(), :id, 1, now(), 5)",
        id=old_delivery,
    )
    age(store, old_delivery, 31)
    age(store, young_delivery, 29)
    store.sql(
        "UPDATE webhook_events SET received_at = now() - interval '31 days' WHERE id IN (:a, :b)",
        a=old_event.id,
        b=shared_event.id,
    )
    lonely = incoming(store.endpoint_row(endpoint_id)["organization_id"])
    with store.tx() as session:
        store_event(session, lonely)
    store.sql("UPDATE webhook_events SET received_at = now() - interval '40 days' WHERE id = :id", id=lonely.id)

    assert purge_expired(store.tx, 30) == (1, 2)

    assert count(store, "webhook_deliveries", id=old_delivery) == 0
    assert count(store, "webhook_delivery_attempts", delivery_id=old_delivery) == 0
    assert count(store, "webhook_events", id=old_event.id) == 0
    assert count(store, "webhook_events", id=lonely.id) == 0
    assert count(store, "webhook_deliveries", id=young_delivery) == 1
    assert count(store, "webhook_events", id=shared_event.id) == 1  # old, but a young delivery needs it
    assert count(store, "webhook_deliveries", id=new_delivery) == 1
    assert count(store, "webhook_events", id=new_event.id) == 1
    assert purge_expired(store.tx, 30) == (0, 0)


def test_a_large_backlog_goes_in_batches(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/batch")
    deliveries = [store.event_for(endpoint_id)[1] for _ in range(7)]
    for delivery_id in deliveries:
        age(store, delivery_id, 45)
    assert purge_expired(store.tx, 30, batch_size=3)[0] == 7
    assert all(count(store, "webhook_deliveries", id=d) == 0 for d in deliveries)


def test_the_periodic_job_purges_each_round_until_stopped(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/periodic")
    stop = threading.Event()
    job = threading.Thread(target=run_retention, args=(store.tx, 30, 0.05, stop))
    job.start()
    try:
        _, delivery_id = store.event_for(endpoint_id)  # created while the job runs
        age(store, delivery_id, 31)
        store.wait_until(lambda: count(store, "webhook_deliveries", id=delivery_id) == 0, what="a later round")
    finally:
        stop.set()
        job.join(timeout=10)
    assert not job.is_alive()
