"""The shared outbox and its relay against a real PostgreSQL (a fresh database whose outbox the
migration helper made) and a real RabbitMQ (a fresh virtual host; a private node for the tests that
stop the broker): every committed event reaches the exchange and is marked only once confirmed,
through broker restarts, dropped database connections and relays running side by side."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
import requests
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from kombu import Queue
from prometheus_client import REGISTRY
from sqlalchemy import create_engine, func, select

from dps_common import request_id
from dps_common.db import Transactions, new_metadata, sqlalchemy_url
from dps_common.messaging import PublishFailed, connect, events_exchange
from dps_common.outbox import OUTBOX_CHANNEL, outbox_table, record_event
from dps_common.outbox.migration import create_outbox, create_outbox_current, drop_outbox
from dps_common.outbox.relay import OutboxRelay, RelaySettings
from dps_common.outbox.relay.batches import claim_unpublished
from dps_common.settings import SettingsError
from dps_testing.broker import PrivateBroker, private_broker
from dps_testing.migrations import migrated
from dps_testing.processes import free_port, scrape, wait_healthy
from dps_testing.services import fresh_database, fresh_vhost
from dps_testing.transactions import committed

EXCHANGE = "test.relay.events"
RELAY_APPLICATION = "dps-outbox-relay-test"  # the LISTEN connection's name starts the same way
RELAY_COMMAND = str(Path(sys.executable).with_name("dps-outbox-relay"))
WAIT_SECONDS = 60

OUTBOX = outbox_table(new_metadata())  # for reading rows back



@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with fresh_database("dps_outbox_test") as url, migrated(url, create_outbox_current):
        yield url


@pytest.fixture(scope="module")
def tx(database_url: str) -> Iterator[Transactions]:
    """The test's own transactions (writing events, checking rows)."""
    with committed(database_url, "dps-outbox-test-writer") as tx:
        yield tx


@pytest.fixture(scope="module")
def relay_tx(database_url: str) -> Iterator[Transactions]:
    with committed(database_url, RELAY_APPLICATION) as tx:
        yield tx


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_relay") as url:
        yield url


@pytest.fixture(scope="module")
def broker() -> Iterator[PrivateBroker]:
    """A RabbitMQ node of this module's own, for the tests that stop the broker."""
    with private_broker() as broker:
        yield broker


@contextmanager
def declared_queue(amqp_url: str, **options: Any) -> Iterator[Queue]:
    """A durable queue bound to every event type (or as ``options`` say: ``Queue`` arguments)."""
    options = {"routing_key": "#", **options}
    queue = Queue(f"relay-test-{uuid4().hex[:8]}", exchange=events_exchange(EXCHANGE), durable=True, **options)
    with connect(amqp_url) as connection:
        queue(connection.default_channel).declare()
    try:
        yield queue
    finally:
        with connect(amqp_url) as connection:  # a new one: the test may have restarted the broker
            queue(connection.default_channel).delete()


def nothing_unpublished(tx: Transactions) -> None:
    with tx() as session:
        session.execute(OUTBOX.update().values(published_at=func.now()))


@pytest.fixture
def queue(request: pytest.FixtureRequest, amqp_url: str, tx: Transactions) -> Iterator[Queue]:
    """A queue on the shared broker's virtual host (options from an indirect parameter); the outbox
    starts each test with nothing unpublished."""
    nothing_unpublished(tx)
    with declared_queue(amqp_url, **getattr(request, "param", {})) as queue:
        yield queue


@pytest.fixture
def make_relay(database_url: str, amqp_url: str, relay_tx: Transactions) -> Callable[..., OutboxRelay]:
    def make(**overrides: Any) -> OutboxRelay:
        settings = RelaySettings(
            database_url=database_url, **{"amqp_url": amqp_url, "events_exchange": EXCHANGE, **overrides}
        )
        return OutboxRelay(settings, relay_tx)

    return make


@contextmanager
def running(*relays: OutboxRelay) -> Iterator[None]:
    stop = threading.Event()
    threads = [threading.Thread(target=relay.run, args=(stop,), daemon=True) for relay in relays]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a relay did not stop when asked"


def write_events(tx: Transactions, count: int, event_type: str = "quote.approved") -> list[UUID]:
    organization_id = uuid4()
    with tx() as session:
        return [
            record_event(session, event_type, organization_id, {"n": n}, datetime.now(UTC)) for n in range(count)
        ]


def unpublished(tx: Transactions, ids: list[UUID]) -> set[UUID]:
    with tx() as session:
        return set(session.scalars(select(OUTBOX.c.id).where(OUTBOX.c.id.in_(ids), OUTBOX.c.published_at.is_(None))))


def wait_until_published(tx: Transactions, ids: list[UUID]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while unpublished(tx, ids):
        assert time.monotonic() < deadline, f"{len(unpublished(tx, ids))} of {len(ids)} events never published"
        time.sleep(0.1)


def drain(amqp_url: str, queue: Queue) -> list[dict[str, Any]]:
    bodies = []
    with connect(amqp_url) as connection:
        bound = queue(connection.default_channel)
        while (message := bound.get(no_ack=True)) is not None:
            bodies.append(json.loads(message.body))
    return bodies


def relay_metrics() -> dict[str, float | None]:
    """This process's relay metrics (every relay of the tests adds to them: compare before and after)."""
    sample = REGISTRY.get_sample_value
    return {
        "published": sample("dps_relay_events_published_total"),
        "not published": sample("dps_relay_events_not_published_total"),
        "confirmed batches": sample("dps_relay_batches_total", {"outcome": "confirmed"}),
        "failed batches": sample("dps_relay_batches_total", {"outcome": "failed"}),
        "delays": sample("dps_relay_publish_delay_seconds_count"),
    }


def test_the_migration_helper_makes_the_table_the_metadata_describes(database_url: str) -> None:
    engine = create_engine(sqlalchemy_url(database_url))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, OUTBOX.metadata) == []
    finally:
        engine.dispose()


def test_drop_outbox_removes_the_table_and_its_trigger_function() -> None:
    with fresh_database("dps_outbox_drop_test") as url:
        with migrated(url, create_outbox), migrated(url, drop_outbox):
            pass
        with psycopg.connect(url) as connection:
            left = connection.execute(
                "SELECT to_regclass('outbox_events'), to_regprocedure('notify_outbox_events()')"
            ).fetchone()
    assert left == (None, None)


def test_every_event_is_published_once_as_its_envelope_and_marked(tx, queue, amqp_url, make_relay) -> None:
    ids = write_events(tx, 250)  # several batches of 100
    with running(make_relay()):
        wait_until_published(tx, ids)
    received = drain(amqp_url, queue)
    assert Counter(UUID(event["id"]) for event in received) == Counter(ids)
    with tx() as session:
        stored = dict(session.execute(select(OUTBOX.c.id, OUTBOX.c.envelope).where(OUTBOX.c.id.in_(ids))).all())
    assert all(event == stored[UUID(event["id"])] for event in received)
    assert {event["type"] for event in received} == {"quote.approved"}


def test_the_request_id_an_event_was_recorded_under_is_its_message_header_not_in_its_envelope(
    tx, queue, amqp_url, make_relay
) -> None:
    with request_id.bound("req-abc.123"):
        traced = write_events(tx, 1)
    untraced = write_events(tx, 1)  # no request (a worker's event): no header
    with running(make_relay()):
        wait_until_published(tx, traced + untraced)
    with connect(amqp_url) as connection:
        bound = queue(connection.default_channel)
        messages = []
        while (message := bound.get(no_ack=True)) is not None:
            messages.append(message)
    by_id = {UUID(json.loads(message.body)["id"]): message for message in messages}
    assert by_id[traced[0]].headers.get("X-Request-Id") == "req-abc.123"
    assert "X-Request-Id" not in (by_id[untraced[0]].headers or {})
    assert "req-abc.123" not in str(by_id[traced[0]].body)  # the envelope is the spec's, unchanged
    with tx() as session:
        stored = session.execute(select(OUTBOX.c.request_id).where(OUTBOX.c.id == traced[0])).scalar_one()
    assert stored == "req-abc.123"


def test_a_commit_wakes_an_idle_relay(tx, queue, amqp_url, make_relay) -> None:
    """With a poll interval far longer than the wait, only the commit's NOTIFY can wake the relay."""
    relay = make_relay(poll_interval_seconds=60)
    with running(relay):
        time.sleep(1)  # let it go idle, waiting for a notification
        ids = write_events(tx, 3)
        wait_until_published(tx, ids)
    assert sorted(UUID(event["id"]) for event in drain(amqp_url, queue)) == sorted(ids)


def test_nothing_is_marked_while_the_broker_is_down(tx, broker, make_relay) -> None:
    nothing_unpublished(tx)
    relay = make_relay(amqp_url=broker.url)
    with declared_queue(broker.url) as queue:
        ids = write_events(tx, 5)
        with broker.stopped():
            with pytest.raises(PublishFailed):
                relay.relay_batch()
            assert unpublished(tx, ids) == set(ids)
        with running(relay):
            wait_until_published(tx, ids)
        assert sorted(UUID(event["id"]) for event in drain(broker.url, queue)) == sorted(ids)


def test_a_commit_notifies_the_relays_channel_and_a_rollback_does_not(tx, database_url) -> None:
    """The outbox's trigger notifies for every insert, at commit only: the channel the relay listens on."""
    with psycopg.connect(database_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {OUTBOX_CHANNEL}")
        with pytest.raises(RuntimeError), tx() as session:
            record_event(session, "quote.approved", uuid4(), {}, datetime.now(UTC))
            raise RuntimeError("roll back")
        assert list(listener.notifies(timeout=0.5)) == []
        with tx() as session:
            record_event(session, "quote.approved", uuid4(), {}, datetime.now(UTC))
            record_event(session, "quote.approved", uuid4(), {}, datetime.now(UTC))
            assert list(listener.notifies(timeout=0.5)) == []  # not before the commit
        [notification] = listener.notifies(timeout=WAIT_SECONDS, stop_after=1)
        assert notification.channel == OUTBOX_CHANNEL
        assert list(listener.notifies(timeout=0.5)) == []  # one per transaction, however many events


@pytest.mark.parametrize("queue", [{"routing_key": "quote.*"}], indirect=True)
def test_an_unroutable_event_stays_unpublished_and_the_rest_of_its_batch_is_marked(
    tx, queue, amqp_url, make_relay
) -> None:
    routed = write_events(tx, 2)
    unroutable = write_events(tx, 1, "deal.closed")
    routed += write_events(tx, 2)
    with pytest.raises(PublishFailed, match="no queue is bound for event type 'deal.closed'"):
        make_relay().relay_batch()
    assert unpublished(tx, routed + unroutable) == set(unroutable)
    assert [UUID(event["id"]) for event in drain(amqp_url, queue)] == routed


@pytest.mark.parametrize(
    "queue", [{"queue_arguments": {"x-max-length": 2, "x-overflow": "reject-publish"}}], indirect=True
)
def test_events_the_broker_refuses_midway_stay_unpublished_and_the_confirmed_are_marked(
    tx, queue, amqp_url, make_relay
) -> None:
    """A full queue that rejects publishes: the broker acks the first two of the batch, nacks the rest."""
    ids = write_events(tx, 5)
    relay = make_relay()
    before = relay_metrics()
    with pytest.raises(PublishFailed, match="refused 3 of 5"):
        relay.relay_batch()
    assert relay.published == 2
    assert unpublished(tx, ids) == set(ids[2:])
    assert [UUID(event["id"]) for event in drain(amqp_url, queue)] == ids[:2]
    with pytest.raises(PublishFailed, match="refused 1 of 3"):  # the refused rows again: two fit now
        relay.relay_batch()
    assert unpublished(tx, ids) == set(ids[4:])
    assert [UUID(event["id"]) for event in drain(amqp_url, queue)] == ids[2:4]
    counted = {name: (value or 0) - (before[name] or 0) for name, value in relay_metrics().items()}
    assert counted == {"published": 4, "not published": 4, "confirmed batches": 0, "failed batches": 2, "delays": 4}


def test_the_relay_rides_out_a_broker_restart_and_every_event_arrives(tx, broker, make_relay) -> None:
    nothing_unpublished(tx)
    with declared_queue(broker.url) as queue:
        before = write_events(tx, 50)
        with running(make_relay(amqp_url=broker.url, batch_size=10)):
            wait_until_published(tx, before)
            with broker.stopped():
                during = write_events(tx, 50)
                assert unpublished(tx, during) == set(during)
            after = write_events(tx, 50)
            wait_until_published(tx, before + during + after)
        received = {UUID(event["id"]) for event in drain(broker.url, queue)}
    assert received >= set(before + during + after)  # duplicates are allowed, gaps are not


def test_the_relay_reconnects_after_its_database_connections_are_dropped(
    tx, queue, amqp_url, make_relay, database_url
) -> None:
    with running(make_relay()):
        first = write_events(tx, 5)
        wait_until_published(tx, first)
        with psycopg.connect(database_url, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name LIKE 'dps-outbox-relay%%'"
            ).fetchone()
        assert row is not None and row[0] >= 2  # the relay's LISTEN connection and its pooled one
        second = write_events(tx, 5)
        wait_until_published(tx, second)
    assert {UUID(event["id"]) for event in drain(amqp_url, queue)} >= set(first + second)


def test_rows_another_relay_holds_are_skipped_not_published(tx, queue, amqp_url, make_relay) -> None:
    held = write_events(tx, 3)
    with tx() as holder:
        assert {event.id for event in claim_unpublished(holder, 3).events} == set(held)
        free = write_events(tx, 4)
        assert make_relay().relay_batch() == 4  # the held rows are skipped, not waited for
        assert unpublished(tx, free) == set()
        assert unpublished(tx, held) == set(held)
    assert sorted(UUID(event["id"]) for event in drain(amqp_url, queue)) == sorted(free)


def test_two_relays_share_the_outbox_and_publish_each_event_once(tx, queue, amqp_url, make_relay) -> None:
    first, second = make_relay(batch_size=10), make_relay(batch_size=10)
    with running(first, second):
        ids = write_events(tx, 400)
        wait_until_published(tx, ids)
    assert first.published + second.published == 400
    assert Counter(UUID(event["id"]) for event in drain(amqp_url, queue)) == Counter(ids)


def relay_env(database_url: str, amqp_url: str, **more: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "AMQP_URL": amqp_url,
        "EVENTS_EXCHANGE": EXCHANGE,
        "LOG_LEVEL": "WARNING",
        **more,
    }


def test_the_relay_command_publishes_and_stops_cleanly_on_sigterm(tx, queue, amqp_url, database_url) -> None:
    relay = subprocess.Popen([RELAY_COMMAND], env=relay_env(database_url, amqp_url))
    try:
        ids = write_events(tx, 20)
        wait_until_published(tx, ids)
    finally:
        relay.send_signal(signal.SIGTERM)
        exit_code = relay.wait(timeout=30)
    assert exit_code == 0
    assert sorted(UUID(event["id"]) for event in drain(amqp_url, queue)) == sorted(ids)


def test_the_relay_command_refuses_bad_settings_with_exit_code_2(database_url) -> None:
    done = subprocess.run(
        [RELAY_COMMAND],
        env=relay_env(database_url, "amqp://127.0.0.1//", RELAY_BATCH_SIZE="0"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "RELAY_BATCH_SIZE" in done.stderr


def test_the_relay_command_serves_health_and_metrics(tx, queue, amqp_url, database_url) -> None:
    port = free_port()
    env = relay_env(database_url, amqp_url, RELAY_METRICS_PORT=str(port), RELAY_METRICS_HOST="127.0.0.1")
    origin = f"http://127.0.0.1:{port}"
    relay = subprocess.Popen([RELAY_COMMAND], env=env)
    try:
        wait_healthy(relay, origin)
        ids = write_events(tx, 30)
        wait_until_published(tx, ids)
        deadline = time.monotonic() + WAIT_SECONDS
        while (samples := scrape(origin))["dps_relay_events_published_total"] < len(ids):  # counted after the commit
            assert time.monotonic() < deadline, f"{samples['dps_relay_events_published_total']} counted"
            time.sleep(0.1)
        health = requests.Session()
        health.trust_env = False
        alive = health.get(origin + "/healthz", timeout=5)
    finally:
        relay.send_signal(signal.SIGTERM)
        exit_code = relay.wait(timeout=30)
    assert exit_code == 0
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    assert samples["dps_relay_events_published_total"] == len(ids) == len(drain(amqp_url, queue))
    assert samples["dps_relay_publish_delay_seconds_count"] == len(ids)
    assert 0 < samples["dps_relay_publish_delay_seconds_sum"] < len(ids) * WAIT_SECONDS
    assert samples['dps_relay_batches_total{outcome="confirmed"}'] >= 1
    assert samples['dps_relay_batches_total{outcome="failed"}'] == 0
    assert samples["dps_relay_events_not_published_total"] == 0
    with pytest.raises(requests.ConnectionError):  # stopped with the process
        health.get(origin + "/healthz", timeout=5)


def test_the_relay_settings_are_read_from_the_environment_and_validated() -> None:
    required = {"DATABASE_URL": "postgresql://u@h/db"}
    defaults = RelaySettings.from_env(required)
    assert (defaults.batch_size, defaults.poll_interval_seconds, defaults.metrics_port) == (100, 30.0, 0)
    chosen = RelaySettings.from_env(
        {
            **required,
            "AMQP_URL": "amqp://u:p@broker//",
            "EVENTS_EXCHANGE": "billing.events",
            "RELAY_BATCH_SIZE": "25",
            "RELAY_POLL_INTERVAL_SECONDS": "0.5",
            "RELAY_METRICS_PORT": "9100",
            "RELAY_METRICS_HOST": "127.0.0.1",
            "LOG_LEVEL": "DEBUG",
        }
    )
    assert (chosen.amqp_url, chosen.events_exchange, chosen.batch_size, chosen.poll_interval_seconds) == (
        "amqp://u:p@broker//",
        "billing.events",
        25,
        0.5,
    )
    assert (chosen.metrics_port, chosen.metrics_host, chosen.log_level) == (9100, "127.0.0.1", "DEBUG")
    with pytest.raises(SettingsError, match="RELAY_METRICS_PORT must be between 0 and 65535"):
        RelaySettings.from_env({**required, "RELAY_METRICS_PORT": "70000"})
