"""Migration 0008 counts the history already there into ``webhook_endpoint_hours`` (every day's
partition and the DEFAULT one, each attempt once, in its hour and its delivery's day), installs the
trigger that counts what is inserted after it, and builds the percentiles' index on every deliveries
partition; its downgrade leaves nothing behind."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, text

from dps_common import migrations
from dps_common.db import sqlalchemy_url
from dps_testing.services import fresh_database

from dps_webhooks.db import partitions

THIS = "0008_endpoint_hours"
BEFORE = "0007_event_log"


def v7_at(moment: datetime) -> uuid.UUID:
    return uuid.UUID(int=(int(moment.timestamp() * 1000) << 80) | (0x7 << 76) | (uuid.uuid4().int & ((1 << 76) - 1)))


@pytest.fixture
def database():
    with fresh_database("dps_wh_hours") as url:
        engine = create_engine(sqlalchemy_url(url))
        yield url, engine
        engine.dispose()


def seed(connection, endpoint, delivery_id, *attempts):
    """A delivery of a new event and its attempts: (when, status, error)."""
    event = uuid.uuid4()
    connection.execute(
        text(
            "INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body, body_bytes)"
            " VALUES (:id, gen_random_uuid(), 'quote.approved', now(), '{}', 2)"
        ),
        {"id": event},
    )
    connection.execute(
        text(
            "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status)"
            " VALUES (:id, gen_random_uuid(), :endpoint, :event, 'quote.approved', 'FAILED')"
        ),
        {"id": delivery_id, "endpoint": endpoint, "event": event},
    )
    for number, (at, status, error) in enumerate(attempts, start=1):
        connection.execute(
            text(
                "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status,"
                " error_message, duration_ms) VALUES (gen_random_uuid(), :id, :n, :at, :status, :error, 5)"
            ),
            {"id": delivery_id, "n": number, "at": at, "status": status, "error": error},
        )


def counts(engine):
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT endpoint_id, hour, delivery_day, succeeded, failed FROM webhook_endpoint_hours")
        )
        return {(e, hour, day): (s, f) for e, hour, day, s, f in rows}


def test_the_history_is_counted_once_and_what_follows_by_the_trigger(database):
    url, engine = database
    migrations.upgrade("dps_webhooks", url, BEFORE)
    now = datetime.now(UTC)
    hour = now.replace(minute=0, second=0, microsecond=0)
    three_days_ago = hour - timedelta(days=3)
    a, b = uuid.uuid4(), uuid.uuid4()
    today, older, stray = v7_at(now), v7_at(three_days_ago), uuid.uuid4()  # stray: no day of ours (DEFAULT)
    with engine.begin() as connection:
        partitions.ensure_days(connection, [three_days_ago.date()])
        for endpoint in (a, b):
            connection.execute(
                text(
                    "INSERT INTO webhook_endpoints (id, organization_id, url, status, secret_sealed)"
                    " VALUES (:id, gen_random_uuid(), 'https://hooks.example.com/in', 'ACTIVE', '\\x00')"
                ),
                {"id": endpoint},
            )
        seed(connection, a, today, (hour, 503, "The receiver answered 503."), (hour + timedelta(minutes=1), 200, None))
        seed(connection, b, older, (three_days_ago, 200, "Timed out after 10 s reading the response body."))
        seed(connection, a, stray, (hour - timedelta(hours=1), 500, "The receiver answered 500."))

    migrations.upgrade("dps_webhooks", url, THIS)

    stray_day = partitions.day_of(stray)  # whatever its bits say: retention never drops it by day
    assert counts(engine) == {
        (a, hour, today_day := now.date()): (1, 1),
        (b, three_days_ago, three_days_ago.date()): (0, 1),
        (a, hour - timedelta(hours=1), stray_day): (0, 1),
    }
    with engine.begin() as connection:  # one more attempt, as recorded after the migration
        connection.execute(
            text(
                "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status,"
                " duration_ms) VALUES (gen_random_uuid(), :id, 3, :at, 204, 5)"
            ),
            {"id": today, "at": hour + timedelta(minutes=2)},
        )
    assert counts(engine)[(a, hour, today_day)] == (2, 1)
    with engine.connect() as connection:
        index = "ix_webhook_deliveries_endpoint_id_succeeded"
        assert connection.execute(
            text("SELECT indisvalid FROM pg_index WHERE indexrelid = CAST(:i AS regclass)"), {"i": index}
        ).scalar()
        days = partitions.existing_days(connection)
        attached = connection.execute(
            text("SELECT count(*) FROM pg_inherits WHERE inhparent = CAST(:i AS regclass)"), {"i": index}
        ).scalar()
    assert attached == len(days) + 1  # every day's partition and the DEFAULT one

    migrations.downgrade("dps_webhooks", url, BEFORE)

    with engine.connect() as connection:
        assert connection.execute(text("SELECT to_regclass('webhook_endpoint_hours')")).scalar() is None
        assert (
            connection.execute(text("SELECT count(*) FROM pg_proc WHERE proname = 'webhook_count_attempts'")).scalar()
            == 0
        )
        assert connection.execute(text("SELECT count(*) FROM webhook_delivery_attempts")).scalar() == 5
