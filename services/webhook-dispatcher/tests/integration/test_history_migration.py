"""Migration 0005 moves the delivery history into the tables partitioned by day and back: every row
and attempt is kept, each in its day's partition (or the DEFAULT one), and the keys hold on both
sides."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError

from dps_common import migrations
from dps_common.db import sqlalchemy_url
from dps_common.ids import new_id
from dps_testing.services import fresh_database

from dps_webhooks.db import partitions

THIS = "0005_history_partitioned_by_day"
BEFORE = f"{THIS}-1"


def v7_days_ago(days: int) -> uuid.UUID:
    """A UUIDv7 whose time is ``days`` days ago (its other bits as new_id made them)."""
    milliseconds = int((datetime.now(UTC) - timedelta(days=days)).timestamp() * 1000)
    return uuid.UUID(int=(milliseconds << 80) | (new_id().int & ((1 << 80) - 1)))


@pytest.fixture
def database():
    with fresh_database("dps_wh_history") as url:
        engine = create_engine(sqlalchemy_url(url))
        yield url, engine
        engine.dispose()


def seed(engine) -> dict[str, uuid.UUID]:
    ids = {"today": new_id(), "ten_days": v7_days_ago(10), "old": v7_days_ago(500), "v4": uuid.uuid4()}
    with engine.begin() as connection:
        endpoint, event = uuid.uuid4(), new_id()
        connection.execute(
            text(
                "INSERT INTO webhook_endpoints (id, organization_id, url, status, secret_sealed)"
                " VALUES (:id, gen_random_uuid(), 'https://hooks.example.com/in', 'ACTIVE', '\\x00')"
            ),
            {"id": endpoint},
        )
        connection.execute(
            text(
                "INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body, body_bytes)"
                " VALUES (:id, gen_random_uuid(), 'quote.approved', now(), '{}', 2)"
            ),
            {"id": event},
        )
        for delivery_id in ids.values():
            connection.execute(
                text(
                    "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status,"
                    " attempt_count, last_response_excerpt)"
                    " VALUES (:id, gen_random_uuid(), :endpoint, :event, 'quote.approved', 'FAILED', 2, 'nope')"
                ),
                {"id": delivery_id, "endpoint": endpoint, "event": event},
            )
            for attempt in (1, 2):
                connection.execute(
                    text(
                        "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms,"
                        " response_status) VALUES (gen_random_uuid(), :id, :n, now(), 7, 503)"
                    ),
                    {"id": delivery_id, "n": attempt},
                )
    return ids


def snapshot(engine):
    with engine.connect() as connection:
        deliveries = connection.execute(
            text(
                "SELECT id, endpoint_id, status, attempt_count, last_response_excerpt, created_at FROM webhook_deliveries ORDER BY id"
            )
        ).all()
        attempts = connection.execute(
            text(
                "SELECT id, delivery_id, attempt, response_status, duration_ms FROM webhook_delivery_attempts ORDER BY id"
            )
        ).all()
    return deliveries, attempts


def relkind(engine, table):
    with engine.connect() as connection:
        return connection.execute(
            text("SELECT relkind FROM pg_class WHERE oid = CAST(:t AS regclass)"), {"t": table}
        ).scalar()


def test_history_moves_into_daily_partitions_and_back(database):
    url, engine = database
    migrations.upgrade("dps_webhooks", url, BEFORE)
    ids = seed(engine)
    before = snapshot(engine)

    migrations.upgrade("dps_webhooks", url, THIS)

    assert snapshot(engine) == before
    assert relkind(engine, "webhook_deliveries") == relkind(engine, "webhook_delivery_attempts") == "p"
    with engine.connect() as connection:
        homes = dict(connection.execute(text("SELECT id, tableoid::regclass::text FROM webhook_deliveries")).all())
        attempt_homes = set(
            connection.execute(
                text("SELECT delivery_id, tableoid::regclass::text FROM webhook_delivery_attempts")
            ).all()
        )
        days = partitions.existing_days(connection)
    for key in ("today", "ten_days"):
        day = partitions.day_of(ids[key])
        assert homes[ids[key]] == partitions.partition("webhook_deliveries", day)
        assert (ids[key], partitions.partition("webhook_delivery_attempts", day)) in attempt_homes
    for key in ("old", "v4"):  # older than any day made, or no time in the id
        assert homes[ids[key]] == partitions.partition("webhook_deliveries", None)
    today = datetime.now(UTC).date()
    assert days[0] == partitions.day_of(ids["ten_days"])
    assert days == [days[0] + timedelta(days=n) for n in range((today - days[0]).days + 8)]  # every day, a week ahead
    with pytest.raises(IntegrityError), engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
                " VALUES (gen_random_uuid(), :id, 2, now(), 1)"
            ),
            {"id": ids["ten_days"]},
        )

    migrations.downgrade("dps_webhooks", url, BEFORE)

    assert snapshot(engine) == before
    assert relkind(engine, "webhook_deliveries") == relkind(engine, "webhook_delivery_attempts") == "r"
    with engine.connect() as connection:
        assert connection.execute(text("SELECT to_regnamespace(:s)"), {"s": partitions.SCHEMA}).scalar() is None
    with pytest.raises(IntegrityError), engine.begin() as connection:  # the plain foreign key is back
        connection.execute(
            text(
                "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, duration_ms)"
                " VALUES (gen_random_uuid(), gen_random_uuid(), 1, now(), 1)"
            )
        )
