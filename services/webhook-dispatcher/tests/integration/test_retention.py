"""The history's maintenance: a week of daily partitions ahead, days past retention dropped whole with
their attempts (and nothing younger), the DEFAULT partition's strays purged in batches or moved
into the day created for them, unreferenced old events deleted; the DDL gives way to readers and to
another replica."""

import os
import threading
import uuid
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from dps_webhooks.db import partitions
from dps_webhooks.services import retention
from dps_webhooks.services.intake import store_event
from dps_webhooks.services.retention import maintain
from dps_webhooks.workers.retention import run_retention

from webhook_helpers import Store, incoming, webhook_database


@pytest.fixture(scope="module")
def store(make_settings):
    with webhook_database() as url:
        store = Store(make_settings(DATABASE_URL=url))
        yield store
        store.close()


def today() -> date:
    return datetime.now(UTC).date()


def v7_id(at: datetime) -> uuid.UUID:
    """A UUIDv7 made at ``at`` (as ``new_id`` would have made it then)."""
    milliseconds = int(at.timestamp() * 1000)
    rand_a, rand_b = int.from_bytes(os.urandom(2), "big") & 0xFFF, int.from_bytes(os.urandom(8), "big") >> 2
    return uuid.UUID(int=(milliseconds << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b)


def delivery(store, endpoint_id, *, delivery_id, days_old=0, attempts=1):
    """A delivery (and its attempts) with a given id, created ``days_old`` days ago, of a new event."""
    organization_id = store.endpoint_row(endpoint_id)["organization_id"]
    event = incoming(organization_id)
    with store.tx() as session:
        store_event(session, event)
    store.sql(
        "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, created_at)"
        " VALUES (:id, :org, :endpoint, :event, 'quote.approved', 'SUCCESS', now() - :d * interval '1 day')",
        id=delivery_id,
        org=organization_id,
        endpoint=endpoint_id,
        event=event.id,
        d=days_old,
    )
    for number in range(1, attempts + 1):
        store.sql(
            "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
            " VALUES (gen_random_uuid(), :id, :n, now(), 5)",
            id=delivery_id,
            n=number,
        )
    return event


def scalar(store, statement, **params):
    with store.tx.read() as session:
        return session.execute(text(statement), params).scalar()


def count(store, table, **where):
    clause = " AND ".join(f"{column} = :{column}" for column in where) or "true"
    return scalar(store, f"SELECT count(*) FROM {table} WHERE {clause}", **where)


def home(store, delivery_id):
    """The partition a delivery's row is in."""
    return scalar(store, "SELECT tableoid::regclass::text FROM webhook_deliveries WHERE id = :id", id=delivery_id)


def days(store):
    with store.tx.read() as session:
        return partitions.existing_days(session.connection())


def test_a_week_of_partitions_is_kept_ahead_and_a_missing_day_is_created(store):
    ahead = [today() + timedelta(days=n) for n in range(retention.DAYS_AHEAD + 1)]
    assert set(ahead) <= set(days(store))  # the migration made them
    with store.tx() as session:
        partitions.drop_day(session.connection(), ahead[-1])
    assert ahead[-1] not in days(store)

    done = maintain(store.tx, 30)

    assert done.created == [ahead[-1]] and not done.postponed
    assert set(ahead) <= set(days(store))
    assert maintain(store.tx, 30).created == []


def test_a_day_past_retention_goes_whole_with_its_attempts_and_nothing_younger(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/in")
    now = datetime.now(UTC)
    old_day, edge_day = (now - timedelta(days=32)).date(), (now - timedelta(days=29)).date()
    with store.tx() as session:
        partitions.ensure_days(session.connection(), [old_day, edge_day])
    old = v7_id(now - timedelta(days=32))
    young = v7_id(now - timedelta(days=29))
    old_event = delivery(store, endpoint_id, delivery_id=old, days_old=32, attempts=3)
    delivery(store, endpoint_id, delivery_id=young, days_old=29, attempts=2)
    _, new = store.event_for(endpoint_id)
    assert home(store, old) == partitions.partition("webhook_deliveries", old_day)
    assert count(store, partitions.partition("webhook_delivery_attempts", old_day)) == 3
    store.sql("UPDATE webhook_events SET received_at = now() - interval '32 days' WHERE id = :id", id=old_event.id)

    done = maintain(store.tx, 30)

    assert old_day in done.dropped and edge_day not in done.dropped
    assert old_day not in days(store) and edge_day in days(store)
    assert count(store, "webhook_deliveries", id=old) == 0
    assert count(store, "webhook_delivery_attempts", delivery_id=old) == 0
    assert count(store, "webhook_events", id=old_event.id) == 0  # no delivery uses it any more
    assert count(store, "webhook_deliveries", id=young) == 1
    assert count(store, "webhook_delivery_attempts", delivery_id=young) == 2
    assert count(store, "webhook_deliveries", id=new) == 1
    assert scalar(store, "SELECT to_regclass(:name)", name=partitions.partition("webhook_deliveries", old_day)) is None


def test_an_old_event_stays_while_a_younger_delivery_uses_it_and_one_nothing_uses_goes(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/events")
    now = datetime.now(UTC)
    young = v7_id(now - timedelta(days=29))
    with store.tx() as session:
        partitions.ensure_days(session.connection(), [young_day := (now - timedelta(days=29)).date()])
    used = delivery(store, endpoint_id, delivery_id=young, days_old=29)
    unused = incoming(store.endpoint_row(endpoint_id)["organization_id"])
    with store.tx() as session:
        store_event(session, unused)
    store.sql(
        "UPDATE webhook_events SET received_at = now() - interval '40 days' WHERE id IN (:used, :unused)",
        used=used.id,
        unused=unused.id,
    )

    first, second = maintain(store.tx, 30), maintain(store.tx, 30)

    assert young_day in days(store)
    assert count(store, "webhook_events", id=used.id) == 1  # its delivery is younger than the retention
    assert count(store, "webhook_events", id=unused.id) == 0
    assert first.events >= 1 and (second.events, second.deliveries, second.dropped) == (0, 0, [])


def test_a_row_no_day_covers_is_stored_in_the_default_partition_and_purged_there_by_age(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/default")
    stray_old, stray_young = uuid.uuid4(), uuid.uuid4()  # not UUIDv7: no day of ours
    delivery(store, endpoint_id, delivery_id=stray_old, days_old=31, attempts=2)
    delivery(store, endpoint_id, delivery_id=stray_young, days_old=29)
    default = partitions.partition("webhook_deliveries", None)
    assert home(store, stray_old) == default and home(store, stray_young) == default

    assert maintain(store.tx, 30).deliveries == 1

    assert count(store, "webhook_deliveries", id=stray_old) == 0
    assert count(store, "webhook_delivery_attempts", delivery_id=stray_old) == 0
    assert count(store, "webhook_deliveries", id=stray_young) == 1


def test_a_large_default_backlog_goes_in_batches(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/batch")
    strays = [uuid.uuid4() for _ in range(7)]
    for stray in strays:
        delivery(store, endpoint_id, delivery_id=stray, days_old=45, attempts=0)
    assert maintain(store.tx, 30, batch_size=3).deliveries == 7
    assert all(count(store, "webhook_deliveries", id=stray) == 0 for stray in strays)


def test_rows_of_a_day_created_late_are_moved_out_of_the_default_partition(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/late")
    last = today() + timedelta(days=retention.DAYS_AHEAD)
    with store.tx() as session:
        partitions.drop_day(session.connection(), last)
    early = v7_id(datetime(last.year, last.month, last.day, 1, tzinfo=UTC))  # a host clock a week ahead
    delivery(store, endpoint_id, delivery_id=early, attempts=2)
    store.sql(
        "UPDATE webhook_delivery_attempts SET webhook_timestamp = 1700000000, webhook_signature = 'v1,sig'"
        " WHERE delivery_id = :id",
        id=early,
    )
    assert home(store, early) == partitions.partition("webhook_deliveries", None)
    kept = "webhook_timestamp = 1700000000 AND webhook_signature = 'v1,sig'"

    assert maintain(store.tx, 30).created == [last]

    assert home(store, early) == partitions.partition("webhook_deliveries", last)
    assert count(store, partitions.partition("webhook_delivery_attempts", last), delivery_id=early) == 2
    assert count(store, partitions.partition("webhook_deliveries", None), id=early) == 0
    assert count(store, partitions.partition("webhook_delivery_attempts", None), delivery_id=early) == 0
    # every column moved with the rows, those added after the partitioning too (0006's signing)
    moved = scalar(store, f"SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = :id AND {kept}", id=early)
    assert moved == 2


def test_constraints_hold_across_the_partitions(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/constraints")
    _, delivery_id = store.event_for(endpoint_id)
    store.sql(
        "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
        " VALUES (gen_random_uuid(), :id, 1, now(), 5)",
        id=delivery_id,
    )
    with pytest.raises(IntegrityError) as duplicate_attempt:
        store.sql(
            "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
            " VALUES (gen_random_uuid(), :id, 1, now(), 5)",
            id=delivery_id,
        )
    assert duplicate_attempt.value.orig.sqlstate == "23505"  # unique (delivery_id, attempt)
    with pytest.raises(IntegrityError, match="fk_webhook_delivery_attempts_p"):  # no such delivery that day
        store.sql(
            "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
            " VALUES (gen_random_uuid(), :id, 1, now(), 5)",
            id=v7_id(datetime.now(UTC)),
        )
    with pytest.raises(IntegrityError) as duplicate_id:
        store.sql(
            "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status)"
            " SELECT id, organization_id, endpoint_id, event_id, event_type, status FROM webhook_deliveries"
            " WHERE id = :id",
            id=delivery_id,
        )
    assert duplicate_id.value.orig.sqlstate == "23505"  # the primary key id
    store.sql("DELETE FROM webhook_endpoints WHERE id = :id", id=endpoint_id)  # cascades to attempts too
    assert count(store, "webhook_delivery_attempts", delivery_id=delivery_id) == 0


def test_the_ddl_gives_way_to_a_long_reader_and_the_purges_still_run(store, monkeypatch):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/busy")
    last = today() + timedelta(days=retention.DAYS_AHEAD)
    with store.tx() as session:
        partitions.drop_day(session.connection(), last)
    stray = uuid.uuid4()
    delivery(store, endpoint_id, delivery_id=stray, days_old=40, attempts=0)
    monkeypatch.setattr(retention, "LOCK_TIMEOUT", "200ms")
    with store.engine.connect() as reader:
        reader.execute(text("SELECT count(*) FROM webhook_deliveries"))  # holds its lock until rolled back

        done = maintain(store.tx, 30)

        reader.rollback()
    assert done.postponed and done.created == []
    assert done.deliveries == 1  # the purge did not wait for the DDL
    assert maintain(store.tx, 30).created == [last]


def test_dropping_a_day_waits_for_a_reader_of_both_tables_instead_of_deadlocking_with_it(store):
    # the reader holds the deliveries and reaches for the attempts while the drop waits: the drop
    # must not hold the attempts by then (it did: CI saw a deadlock, either side may be aborted)
    day = today() - timedelta(days=40)
    with store.tx() as session:
        partitions.ensure_days(session.connection(), [day])
    dropped: list[BaseException | None] = []

    def drop() -> None:
        try:
            with store.tx() as session:
                partitions.drop_day(session.connection(), day)
            dropped.append(None)
        except BaseException as exc:
            dropped.append(exc)

    with store.engine.connect() as reader:
        reader.execute(text("SELECT count(*) FROM webhook_deliveries"))
        dropper = threading.Thread(target=drop)
        dropper.start()
        store.wait_until(lambda: waiting_on_a_lock(store) > 0, what="the drop waiting for the reader")
        reader.execute(text("SELECT count(*) FROM webhook_delivery_attempts"))
        reader.rollback()
    dropper.join(timeout=10)

    assert dropped == [None]
    assert day not in days(store)


def waiting_on_a_lock(store) -> int:
    return scalar(
        store,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )


def test_one_replica_at_a_time_does_the_ddl(store):
    last = today() + timedelta(days=retention.DAYS_AHEAD)
    with store.tx() as session:
        partitions.drop_day(session.connection(), last)
    with store.engine.connect() as other:
        other.execute(text("SELECT pg_advisory_lock(:key)"), {"key": retention._PARTITIONS_LOCK})
        try:
            done = maintain(store.tx, 30)
        finally:
            other.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": retention._PARTITIONS_LOCK})
            other.commit()
    assert done.postponed and last not in days(store)
    assert maintain(store.tx, 30).created == [last]


def test_the_periodic_job_maintains_each_round_until_stopped(store):
    last = today() + timedelta(days=retention.DAYS_AHEAD)
    stop = threading.Event()
    job = threading.Thread(target=run_retention, args=(store.tx, 30, 0.05, stop))
    job.start()
    try:
        store.wait_until(lambda: last in days(store), what="the first round")
        with store.tx() as session:
            partitions.drop_day(session.connection(), last)  # while the job runs
        store.wait_until(lambda: last in days(store), what="a later round")
    finally:
        stop.set()
        job.join(timeout=10)
    assert not job.is_alive()
