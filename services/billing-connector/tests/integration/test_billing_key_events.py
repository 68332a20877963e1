"""The connector's key checks follow key events: with the spec's longest key cache (10 minutes), a
key revoked or rotated at the api stops working here as soon as its event arrives, through the
wiring each gunicorn worker starts (``build_http(key_events=True)``), on a fresh virtual host."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from uuid import uuid4

import pytest

from dps_common.auth.introspection import IntrospectingAuthenticator
from dps_common.auth.revocations import KEY_REVOKED, KEY_ROTATED, key_event_data, start_key_events
from dps_common.auth.scopes import Role
from dps_common.bootstrap import key_authenticator
from dps_common.errors import Unauthorized
from dps_common.events.envelope import envelope
from dps_common.messaging import EventPublisher
from dps_testing.broker import publish_one
from dps_testing.fake_api import FakeApi
from dps_testing.services import fresh_vhost

from dps_billing.settings import Settings

EXCHANGE = "test.billing.key.events"
WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_billing_key_events") as url:
        yield url


@pytest.fixture
def authenticator(make_settings: Callable[..., Settings], amqp_url: str) -> Iterator[IntrospectingAuthenticator]:
    settings = make_settings(KEY_CACHE_TTL_SECONDS="600", AMQP_URL=amqp_url, EVENTS_EXCHANGE=EXCHANGE)
    authenticator = key_authenticator(settings)
    subscriber = start_key_events(settings.amqp_url, settings.events_exchange, authenticator)
    assert subscriber is not None and subscriber.subscribed.wait(WAIT_SECONDS)
    yield authenticator
    subscriber.stop()


def accepts(authenticator: IntrospectingAuthenticator, key: str) -> bool:
    try:
        authenticator.authenticate(key)
    except Unauthorized:
        return False
    return True


def publish(amqp_url: str, event_type: str, key: str) -> None:
    """What the api's outbox relay publishes after the admin command line changed the key."""
    publisher = EventPublisher(amqp_url, EXCHANGE)
    try:
        publish_one(publisher, envelope(event_type, uuid4(), key_event_data(str(uuid4()), key.split("_")[1])))
    finally:
        publisher.close()


@pytest.mark.parametrize("event_type", [KEY_REVOKED, KEY_ROTATED])
def test_billing_a_key_changed_at_the_api_stops_here_when_its_event_arrives(authenticator, fake_api: FakeApi, amqp_url, event_type):
    member, other = fake_api.member(uuid4(), Role.ADMIN), fake_api.member(uuid4(), Role.USER)
    assert accepts(authenticator, member.key) and accepts(authenticator, other.key)  # cached for 10 minutes
    fake_api.revoke(member.key)
    assert accepts(authenticator, member.key)  # no event yet: the cache still holds it
    publish(amqp_url, event_type, member.key)
    deadline = time.monotonic() + WAIT_SECONDS
    while accepts(authenticator, member.key):
        assert time.monotonic() < deadline, "the key event never reached the connector's cache"
        time.sleep(0.02)
    assert accepts(authenticator, other.key)


def test_billing_without_a_broker_url_the_ttl_alone_bounds_revocation(make_settings: Callable[..., Settings]):
    settings = make_settings()
    assert settings.amqp_url == ""
    assert start_key_events(settings.amqp_url, settings.events_exchange, key_authenticator(settings)) is None
