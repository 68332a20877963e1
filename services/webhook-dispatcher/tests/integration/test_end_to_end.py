"""The whole events path as separate processes, as in production: rows in the api's outbox, the
api's relay (``dealpricing-outbox-relay``), RabbitMQ, the dispatcher's worker (``dealpricing-webhooks
worker``: consumer and deliveries) and a real HTTPS receiver that verifies every signature. RabbitMQ
(a private node of this module's, never the machine's shared one) is stopped and started mid-run;
every event still ends ``SUCCESS`` at the receiver.

The dispatcher's tests import no api code: the api's database is migrated by its command line and
its outbox is written with plain SQL, as the api's own transactions would write it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg.types.json import Jsonb
from sqlalchemy import func, select

from dps_common.events.envelope import envelope
from dps_testing.broker import PrivateBroker, private_broker
from dps_testing.real_api import api_database as migrated_api_database
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.db.models import WebhookDelivery
from dps_webhooks.settings import Settings

from webhook_helpers import Store, webhook_database, worker_process_env

BIN = Path(sys.executable).parent
EVENTS_QUEUE = "webhook-dispatcher.events"
WAIT_SECONDS = 120


@pytest.fixture(scope="module")
def api_database() -> Iterator[str]:
    with migrated_api_database("dps_wh_e2e_api") as env:
        yield env["DATABASE_URL"]


@pytest.fixture(scope="module")
def broker() -> Iterator[PrivateBroker]:
    with private_broker() as broker:
        yield broker


@pytest.fixture(scope="module")
def amqp_url(broker: PrivateBroker) -> str:
    return broker.url


@pytest.fixture(scope="module")
def dispatcher_env(amqp_url: str, tls_files: dict[str, str]) -> Iterator[dict[str, str]]:
    with webhook_database("dps_wh_e2e") as url:
        yield worker_process_env(
            url, amqp_url, tls_files["ca"], WEBHOOK_RETRY_GAPS_SECONDS="0.5,0.5,1,1,2,2,5", WEBHOOK_RETRY_JITTER="0"
        )


@pytest.fixture(scope="module")
def store(dispatcher_env: dict[str, str]) -> Iterator[Store]:
    store = Store(Settings.from_env(dispatcher_env))
    yield store
    store.close()


@contextmanager
def process(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen]:
    """A service process, stopped with SIGTERM at the end and required to exit cleanly."""
    child = subprocess.Popen(command, env={**os.environ, **env}, stdout=subprocess.DEVNULL)
    try:
        yield child
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            exit_code = child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            raise
    assert exit_code == 0, f"{command[0]} exited with {exit_code}"


def write_outbox(api_database: str, organization_id: UUID, count: int) -> list[str]:
    """Events committed into the api's outbox as its use cases write them (with the wake-up NOTIFY)."""
    ids = []
    with psycopg.connect(api_database) as connection:
        for n in range(count):
            now = datetime.now(UTC)
            event = envelope("quote.approved", organization_id, {"n": n, "total": "99.00"}, occurred_at=now)
            connection.execute(
                "INSERT INTO outbox_events (id, organization_id, event_type, occurred_at, envelope) "
                "VALUES (%s, %s, %s, %s, %s)",
                (event["id"], str(organization_id), event["type"], now, Jsonb(event)),
            )
            ids.append(event["id"])
        connection.execute("SELECT pg_notify('outbox_events', '')")
    return ids


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


def queue_declared(broker: PrivateBroker) -> bool:
    try:
        broker.queue_counts(EVENTS_QUEUE)
    except LookupError:
        return False
    return True


def test_every_event_ends_success_at_the_receiver_across_a_broker_restart(
    api_database, amqp_url, broker, dispatcher_env, store, tls_files
) -> None:
    organization_id = uuid4()
    with ExitStack() as stack:
        receiver = stack.enter_context(Receiver(tls_files))
        endpoint_id, secret = store.endpoint(receiver.url("/e2e"), organization_id=organization_id)
        receiver.secrets.append(secret)
        stack.enter_context(process([str(BIN / "dealpricing-webhooks"), "worker"], dispatcher_env))
        wait_for(lambda: queue_declared(broker), "the worker's consumer declared its queue")
        relay_env = {"DATABASE_URL": api_database, "AMQP_URL": amqp_url, "LOG_LEVEL": "WARNING"}
        stack.enter_context(process([str(BIN / "dealpricing-outbox-relay")], relay_env))

        def arrived() -> set[str]:  # deduplicated by event id, as the spec tells receivers to
            return {request.event_id for request in receiver.requests_to("/e2e")}

        first = write_outbox(api_database, organization_id, 20)
        wait_for(lambda: arrived() >= set(first), "the first events arrived")
        in_flight = write_outbox(api_database, organization_id, 20)  # on their way as the broker stops
        with broker.stopped():
            while_down = write_outbox(api_database, organization_id, 20)
        after = write_outbox(api_database, organization_id, 20)
        every = first + in_flight + while_down + after
        wait_for(lambda: arrived() >= set(every), "every event arrived at the receiver")

        def all_succeeded() -> bool:
            with store.tx() as session:
                statuses = dict(
                    session.execute(
                        select(WebhookDelivery.status, func.count())
                        .where(WebhookDelivery.endpoint_id == endpoint_id)
                        .group_by(WebhookDelivery.status)
                    ).all()
                )
            return statuses == {"SUCCESS": len(every)}

        wait_for(all_succeeded, "every delivery is SUCCESS")
    requests = receiver.requests_to("/e2e")
    assert all(request.verified for request in requests)  # signed with the endpoint's secret
    assert {request.event_id for request in requests} == set(every)  # nothing else, nothing missing
    with store.tx() as session:
        delivered = session.scalars(
            select(WebhookDelivery.event_id).where(WebhookDelivery.endpoint_id == endpoint_id)
        ).all()
    assert sorted(str(event_id) for event_id in delivered) == sorted(every)  # one delivery per event
