"""The api's events through the shared outbox relay (``dps_common.outbox``, whose own tests cover the
relay itself): a use case's event, committed in the api's migrated database, wakes the relay on
the channel migration 0006's trigger notifies and reaches the exchange; the api's
``dealpricing-outbox-relay`` command is the shared relay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from falcon import testing
from kombu import Queue
from sqlalchemy import select

from dps_common.db import Transactions
from dps_common.messaging import connect, events_exchange
from dps_common.outbox.relay import OutboxRelay, RelaySettings
from dps_testing.services import fresh_database, fresh_vhost
from dps_testing.transactions import committed

from dps_api.composition import build_http
from dps_api.db.migrate import upgrade
from dps_api.db.models.outbox import OutboxEvent
from dps_api.services.identity import IdentityService
from dps_api.services.outbox import OUTBOX_CHANNEL
from dps_api.settings import Settings

from api_orgs import Org, make_org

EXCHANGE = "test.api.relay.events"
PRODUCTS = "/external/v1/products"
WAIT_SECONDS = 60


@pytest.fixture(scope="module")
def api_database() -> Iterator[str]:
    """The api's own migrated database, with committed transactions (the relay must see the rows)."""
    with fresh_database("dps_api_relay_test") as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="module")
def api_tx(api_database: str) -> Iterator[Transactions]:
    with committed(api_database, "dps-api-relay-test") as tx:
        yield tx


@pytest.fixture(scope="module")
def client(api_database: str, api_tx: Transactions) -> testing.TestClient:
    settings = Settings.from_env(
        {
            "DATABASE_URL": api_database,
            "API_KEY_PEPPER": "relay-test-pepper-0123456789abcdef0123456789",
            "CURSOR_SECRET": "relay-test-cursor-secret-0123456789abcdef012",
        }
    )
    return testing.TestClient(build_http(settings, tx=api_tx))


@pytest.fixture
def org(client: testing.TestClient) -> Org:
    """A new organization per test: its events are the test's own."""
    ctx = client.app.context
    identity = IdentityService(ctx.tx, ctx.settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
    return make_org(identity, f"Relay {uuid4().hex[:8]}")


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_api_relay") as url:
        yield url


@pytest.fixture
def queue(amqp_url: str) -> Iterator[Queue]:
    queue = Queue(f"api-relay-{uuid4().hex[:8]}", exchange=events_exchange(EXCHANGE), routing_key="product.*")
    with connect(amqp_url) as connection:
        queue(connection.default_channel).declare()
    yield queue
    with connect(amqp_url) as connection:
        queue(connection.default_channel).delete()


def create_product(client: testing.TestClient, org: Org) -> dict[str, Any]:
    body = {"specId": f"SKU-{uuid4().hex[:8]}", "name": "Seat", "priceModel": "PER_UNIT", "listPrices": {"USD": "10"}}
    resp = client.simulate_post(PRODUCTS, json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def unpublished_products(api_tx: Transactions, organization_id: object) -> list[OutboxEvent]:
    with api_tx() as session:
        stmt = select(OutboxEvent).where(
            OutboxEvent.organization_id == organization_id, OutboxEvent.published_at.is_(None)
        )
        return list(session.scalars(stmt))


def drain(amqp_url: str, queue: Queue) -> list[dict[str, Any]]:
    bodies = []
    with connect(amqp_url) as connection:
        bound = queue(connection.default_channel)
        while (message := bound.get(no_ack=True)) is not None:
            bodies.append(json.loads(message.body))
    return bodies


def test_a_use_case_commits_its_event_and_the_relay_publishes_it(
    client, org, api_tx, api_database, amqp_url, queue
) -> None:
    product = create_product(client, org)
    [row] = unpublished_products(api_tx, org.id)
    assert (row.event_type, row.envelope["data"]["id"]) == ("product.created", product["id"])
    relay = OutboxRelay(RelaySettings(database_url=api_database, amqp_url=amqp_url, events_exchange=EXCHANGE), api_tx)
    while relay.relay_batch():  # whatever else is unpublished goes too; products of this org once
        pass
    [event] = [event for event in drain(amqp_url, queue) if event["organizationId"] == str(org.id)]
    assert event == row.envelope
    assert unpublished_products(api_tx, org.id) == []


def test_the_api_commit_notifies_the_channel_the_relay_listens_on(client, org, api_database) -> None:
    """Migration 0006's trigger and the relay's ``LISTEN`` agree on the channel."""
    with psycopg.connect(api_database, autocommit=True) as listener:
        listener.execute(f"LISTEN {OUTBOX_CHANNEL}")
        create_product(client, org)
        [notification] = listener.notifies(timeout=WAIT_SECONDS, stop_after=1)
    assert notification.channel == OUTBOX_CHANNEL == "outbox_events"


def test_the_api_relay_command_publishes_the_api_outbox_and_stops_on_sigterm(
    client, org, api_tx, api_database, amqp_url, queue
) -> None:
    env = {**os.environ, "DATABASE_URL": api_database, "AMQP_URL": amqp_url, "EVENTS_EXCHANGE": EXCHANGE, "LOG_LEVEL": "WARNING"}
    relay = subprocess.Popen([str(Path(sys.executable).with_name("dealpricing-outbox-relay"))], env=env)
    try:
        products = [create_product(client, org)["id"] for _ in range(3)]
        deadline = time.monotonic() + WAIT_SECONDS
        while unpublished_products(api_tx, org.id):
            assert time.monotonic() < deadline, "the relay never published the api's events"
            time.sleep(0.1)
    finally:
        relay.send_signal(signal.SIGTERM)
        exit_code = relay.wait(timeout=30)
    assert exit_code == 0
    mine = [event for event in drain(amqp_url, queue) if event["organizationId"] == str(org.id)]
    assert sorted(event["data"]["id"] for event in mine) == sorted(products)
