"""The endpoint's stats on the real history (issue 27): the attempts are counted per endpoint and hour
as the recording inserts them, for every kind of delivery (an event's, a test delivery, a manual
retry, a recovery's redelivery); the counts follow the history as retention drops days, and rows
moved out of the DEFAULT partition are not counted twice."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.clock import utc_now

from dps_webhooks.adapters.events import webhook_test_envelope
from dps_webhooks.db import partitions
from dps_webhooks.db.deliveries import claim_due
from dps_webhooks.db.models import EndpointHour, WebhookDelivery
from dps_webhooks.domain.attempt_outcome import AttemptResult, DeliveryStatus, EndpointEffect, Outcome
from dps_webhooks.services import retention
from dps_webhooks.services.deliveries import DeliveryService
from dps_webhooks.services.endpoint_stats import EndpointStatsService
from dps_webhooks.services.recording import Finished, record_outcomes
from dps_webhooks.services.recovery import RecoveryService
from dps_webhooks.services.retention import maintain

from webhook_helpers import Store, webhook_database  # noqa: F401  (Store: the fixture's type)

OK = (AttemptResult(200, "ok", None, 12), Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES))
EXHAUSTED = (
    AttemptResult(500, "no", "The receiver answered 500.", 7),
    Outcome(DeliveryStatus.EXHAUSTED, None, EndpointEffect.COUNT_FAILURE),
)
DOWN = (
    AttemptResult(503, "down", "The receiver answered 503.", 7),
    Outcome(DeliveryStatus.FAILED, 30, EndpointEffect.COUNT_FAILURE),
)


@pytest.fixture(scope="module")
def store(make_settings):
    with webhook_database("dps_wh_stats") as url:
        store = Store(make_settings(DATABASE_URL=url))
        yield store
        store.close()


def v7_at(moment: datetime) -> uuid.UUID:
    """A UUIDv7 of ``moment`` (its random bits from uuid4)."""
    return uuid.UUID(int=(int(moment.timestamp() * 1000) << 80) | (0x7 << 76) | (uuid.uuid4().int & ((1 << 76) - 1)))


def record(store, endpoint_id, outcomes, *others):
    """Claim the due deliveries and record ``outcomes`` (one per delivery of ``endpoint_id``, in id
    order; ``others``: more endpoints and their outcomes) in one batch, as a worker does."""
    plan = {endpoint_id: outcomes, **dict(zip(others[::2], others[1::2], strict=True))}
    with store.tx() as session:
        claimed = sorted(
            (c for c in claim_due(session, 1000, 60) if c.endpoint_id in plan), key=lambda c: c.delivery_id
        )
        assert sorted(c.endpoint_id for c in claimed) == sorted(e for e, o in plan.items() for _ in o)
        batch = [
            Finished(c, result, outcome)
            for endpoint, planned in plan.items()
            for c, (result, outcome) in zip([c for c in claimed if c.endpoint_id == endpoint], planned, strict=True)
        ]
        return record_outcomes(session, batch, disable_after=20)


def hours_of(store, endpoint_id):
    """The endpoint's counts as kept: {(hour, delivery day): (succeeded, failed)}."""
    with store.tx.read() as session:
        rows = session.execute(
            select(EndpointHour.hour, EndpointHour.delivery_day, EndpointHour.succeeded, EndpointHour.failed).where(
                EndpointHour.endpoint_id == endpoint_id
            )
        )
        return {(hour, day): (succeeded, failed) for hour, day, succeeded, failed in rows}


def principal_of(store, endpoint_id):
    """An admin of the endpoint's organization."""
    return Principal(store.endpoint_row(endpoint_id)["organization_id"], "Stats Co", uuid.uuid4(), Role.ADMIN, "key")


def stats(store, endpoint_id, window):
    service = EndpointStatsService(store.tx, store.settings, utc_now)
    counted = service.stats(principal_of(store, endpoint_id), endpoint_id, window)
    return counted.succeeded, counted.failed


def test_a_recorded_batch_counts_each_attempt_in_its_endpoint_s_hour(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/counted")
    organization_id = store.endpoint_row(endpoint_id)["organization_id"]
    other_id, _ = store.endpoint("https://hooks.example.com/other", organization_id=organization_id)
    ids = [store.event_for(endpoint_id)[1] for _ in range(3)]  # each event's delivery to other_id too

    before = datetime.now(UTC)
    record(store, endpoint_id, [OK, DOWN, OK], other_id, [DOWN, DOWN, DOWN])

    hour = {row["last_attempted_at"].replace(minute=0, second=0, microsecond=0) for row in map(store.delivery_row, ids)}
    assert len(hour) == 1 or before.minute == 59  # recorded in one hour, unless it turned meanwhile
    if len(hour) == 1:
        [hour_start] = hour
        assert hours_of(store, endpoint_id) == {(hour_start, before.date()): (2, 1)}
    assert stats(store, endpoint_id, "24h") == (2, 1) and stats(store, other_id, "24h") == (0, 3)


def test_a_test_delivery_a_manual_retry_and_a_recovery_s_redelivery_are_the_endpoint_s_attempts(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/retried")
    principal = principal_of(store, endpoint_id)
    since = datetime.now(UTC) - timedelta(minutes=1)
    _, retried = store.event_for(endpoint_id)
    _, recovered = store.event_for(endpoint_id)
    record(store, endpoint_id, [EXHAUSTED, EXHAUSTED])  # both given up (their attempts all failed)
    _, test_delivery = store.test_delivery(endpoint_id)
    record(store, endpoint_id, [DOWN])  # the test delivery failed once
    retry = DeliveryService(store.tx, utc_now, webhook_test_envelope).retry_delivery(principal, endpoint_id, retried).id
    record(store, endpoint_id, [OK])
    assert (
        RecoveryService(store.tx, store.settings, utc_now).recover(principal, endpoint_id, since, None).recovered == 1
    )
    with store.tx.read() as session:
        [redelivery] = session.scalars(select(WebhookDelivery.id).where(WebhookDelivery.retry_of == recovered))
    record(store, endpoint_id, [OK])

    assert {store.delivery_row(d)["status"] for d in (test_delivery, retry, redelivery)} == {"FAILED", "SUCCESS"}
    assert stats(store, endpoint_id, "24h") == stats(store, endpoint_id, "7d") == (2, 3)


def test_a_day_dropped_by_retention_is_no_longer_counted(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/retention")
    day = (datetime.now(UTC) - timedelta(days=3)).date()
    created = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    with store.tx() as session:
        partitions.ensure_days(session.connection(), [day])
    _, today_delivery = store.event_for(endpoint_id)
    record(store, endpoint_id, [OK])
    old = v7_at(created)
    store.sql(
        "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, attempt_count,"
        " created_at) SELECT :old, organization_id, endpoint_id, event_id, event_type, 'SUCCESS', 1, :created"
        " FROM webhook_deliveries WHERE id = :id",
        old=old,
        created=created,
        id=today_delivery,
    )
    store.sql(
        "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status, duration_ms)"
        " VALUES (gen_random_uuid(), :old, 1, :at, 503, 9), (gen_random_uuid(), :old, 2, :later, 204, 9)",
        old=old,
        at=created + timedelta(seconds=1),
        later=created + timedelta(minutes=1),
    )  # as a seeding does: counted all the same, in the day of their delivery
    assert hours_of(store, endpoint_id)[(created, day)] == (1, 1)
    assert stats(store, endpoint_id, "7d") == (2, 1) and stats(store, endpoint_id, "24h") == (1, 0)

    with store.tx() as session:
        partitions.drop_day(session.connection(), day)

    assert stats(store, endpoint_id, "7d") == (1, 0)


def test_rows_moved_out_of_the_default_partition_are_not_counted_twice(store):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/adopted")
    late = (datetime.now(UTC) + timedelta(days=retention.DAYS_AHEAD)).date()
    with store.tx() as session:
        partitions.drop_day(session.connection(), late)  # as if the maintenance had not made it yet
    _, delivery_id = store.event_for(endpoint_id)
    early = v7_at(datetime(late.year, late.month, late.day, 1, tzinfo=UTC))  # a host clock a week ahead
    store.sql(
        "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status)"
        " SELECT :early, organization_id, endpoint_id, event_id, event_type, 'FAILED' FROM webhook_deliveries"
        " WHERE id = :id",
        early=early,
        id=delivery_id,
    )
    store.sql(
        "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status, duration_ms)"
        " VALUES (gen_random_uuid(), :early, 1, now(), 500, 9), (gen_random_uuid(), :early, 2, now(), 502, 9)",
        early=early,
    )
    assert stats(store, endpoint_id, "24h") == (0, 2)

    assert late in maintain(store.tx, 30).created  # moved into the day made for them

    assert stats(store, endpoint_id, "24h") == (0, 2)
    assert sum(failed for _, failed in hours_of(store, endpoint_id).values()) == 2
