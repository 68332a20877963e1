"""Key events from the api: rotating or revoking a key records ``internal.api_key.*`` in the outbox
in the same transaction, the shared relay publishes it, and a worker whose cache still holds the key
(another process made the change) drops it when the event arrives, long before its TTL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from uuid import uuid4

import pytest
from falcon import testing
from sqlalchemy import select

from dps_common.auth.revocations import KEY_REVOKED, KEY_ROTATED, start_key_events
from dps_common.db import Transactions
from dps_common.events.catalogue import UnknownEventType
from dps_common.events.envelope import is_internal
from dps_common.messaging.subscriber import Subscriber
from dps_common.outbox.relay import OutboxRelay, RelaySettings
from dps_testing.services import fresh_database, fresh_vhost
from dps_testing.transactions import committed

from dps_api.adapters.outbox import OUTBOX
from dps_api.composition import build_http
from dps_api.db.migrate import upgrade
from dps_api.db.models.outbox import OutboxEvent
from dps_api.schemas.events import EVENTS
from dps_api.services.identity import IdentityService
from dps_api.services.outbox import record_internal_event
from dps_api.settings import Settings

from api_orgs import Org, make_org

EXCHANGE = "test.api.key.events"
WAIT_SECONDS = 30
WHOAMI = "/external/v1/whoami"


@pytest.fixture(scope="module")
def api_database() -> Iterator[str]:
    with fresh_database("dps_api_key_events") as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="module")
def api_tx(api_database: str) -> Iterator[Transactions]:
    with committed(api_database, "dps-api-key-events-test") as tx:
        yield tx


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_api_key_events") as url:
        yield url


@pytest.fixture(scope="module")
def settings(api_database: str, amqp_url: str) -> Settings:
    return Settings.from_env(
        {
            "DATABASE_URL": api_database,
            "API_KEY_PEPPER": "key-events-pepper-0123456789abcdef0123456789",
            "CURSOR_SECRET": "key-events-cursor-secret-0123456789abcdef012",
            "KEY_CACHE_TTL_SECONDS": "600",  # the spec's most: only an event can end a key here in time
            "AMQP_URL": amqp_url,
            "EVENTS_EXCHANGE": EXCHANGE,
        }
    )


@pytest.fixture(scope="module")
def client(settings: Settings, api_tx: Transactions) -> testing.TestClient:
    return testing.TestClient(build_http(settings, tx=api_tx))


@pytest.fixture(scope="module")
def subscribed(client: testing.TestClient, settings: Settings) -> Iterator[Subscriber]:
    """This worker's subscription, as ``build_http(key_events=True)`` starts it in gunicorn."""
    subscriber = start_key_events(settings.amqp_url, settings.events_exchange, client.app.context.authenticator)
    assert subscriber is not None and subscriber.subscribed.wait(WAIT_SECONDS)
    yield subscriber
    subscriber.stop()


@pytest.fixture
def elsewhere(client: testing.TestClient) -> IdentityService:
    """The admin command line: another process, whose changes never touch this worker's cache."""
    ctx = client.app.context
    return IdentityService(ctx.tx, ctx.settings.api_key_pepper, ctx.now, lambda key_id: None)


@pytest.fixture
def org(elsewhere: IdentityService) -> Org:
    return make_org(elsewhere, f"Keys {uuid4().hex[:8]}")


@pytest.fixture
def relay(settings: Settings, api_tx: Transactions) -> OutboxRelay:
    relay_settings = RelaySettings(database_url=settings.database_url, amqp_url=settings.amqp_url, events_exchange=EXCHANGE)
    return OutboxRelay(relay_settings, api_tx)


def key_events(api_tx: Transactions, organization_id: object) -> list[tuple[str, dict]]:
    with api_tx() as session:
        rows = session.scalars(
            select(OutboxEvent).where(OutboxEvent.organization_id == organization_id).order_by(OutboxEvent.occurred_at)
        )
        return [(row.event_type, row.envelope["data"]) for row in rows]


def key_id(key: str) -> str:
    return key.split("_")[1]


def whoami(client: testing.TestClient, key: str) -> int:
    return client.simulate_get(WHOAMI, headers={"x-api-key": key}).status_code


def until_refused(client: testing.TestClient, key: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while whoami(client, key) != 401:
        assert time.monotonic() < deadline, "the key event never reached this worker's cache"
        time.sleep(0.02)


def test_rotating_and_revoking_record_key_events_with_the_old_key_id(org, elsewhere, api_tx):
    rotated = elsewhere.rotate_key(org.user.key_row_id)
    elsewhere.revoke_key(org.viewer.key_row_id)
    elsewhere.revoke_key(org.viewer.key_row_id)  # already revoked: nothing changes, nothing to tell
    assert key_events(api_tx, org.id) == [
        (KEY_ROTATED, {"apiKeyId": str(org.user.key_row_id), "keyId": key_id(org.user.key)}),
        (KEY_REVOKED, {"apiKeyId": str(org.viewer.key_row_id), "keyId": key_id(org.viewer.key)}),
    ]
    assert key_id(rotated.secret) != key_id(org.user.key)


def test_a_key_revoked_elsewhere_stops_working_here_when_its_event_arrives(client, subscribed, org, elsewhere, relay):
    assert whoami(client, org.admin.key) == 200  # cached for 10 minutes
    elsewhere.revoke_key(org.admin.key_row_id)
    assert whoami(client, org.admin.key) == 200  # no event yet: the cache still holds it
    relay.relay_batch()
    until_refused(client, org.admin.key)
    assert whoami(client, org.user.key) == 200


def test_a_key_rotated_elsewhere_stops_working_here_when_its_event_arrives(client, subscribed, org, elsewhere, relay):
    assert whoami(client, org.user.key) == 200
    rotated = elsewhere.rotate_key(org.user.key_row_id)
    relay.relay_batch()
    until_refused(client, org.user.key)
    assert whoami(client, rotated.secret) == 200


def test_key_events_are_internal_never_in_the_customer_catalogue(api_tx):
    assert KEY_REVOKED not in EVENTS and KEY_ROTATED not in EVENTS
    assert not [event.name for event in EVENTS if is_internal(event.name)]  # nor any other internal type
    now = datetime.now(UTC)
    with api_tx() as session:
        with pytest.raises(UnknownEventType):
            OUTBOX.record(session, {}, uuid4(), now, KEY_REVOKED)  # the customer outbox refuses it
        with pytest.raises(UnknownEventType):
            record_internal_event(session, "quote.created", uuid4(), {}, now)  # and this one is for internal ones only
