"""A key revoked with the admin command line stops working in the dispatcher within the dispatcher's
own TTL measured from the revocation, even with no key event at all (the api answers introspection
from its database, not from its cache), and at once when the key event arrives.

The api here is a real one (gunicorn over HTTPS, the suite's database) with the spec's longest cache,
10 minutes, and no broker: its cache would keep the key alive for a TTL of its own on top of ours."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from uuid import uuid4

import pytest
import requests
from sqlalchemy import select

from dps_common.auth.introspection import IntrospectingAuthenticator
from dps_common.auth.revocations import KEY_REVOKED, KEY_ROTATED, start_key_events
from dps_common.bootstrap import key_authenticator
from dps_common.db import Transactions
from dps_common.errors import Unauthorized
from dps_common.messaging import EventPublisher
from dps_common.outbox.table import OUTBOX
from dps_testing.broker import publish_one
from dps_testing.provisioning import Admin, Member, Org
from dps_testing.real_api import api_server
from dps_testing.services import fresh_vhost
from dps_testing.transactions import committed

from dps_webhooks.settings import Settings

EXCHANGE = "test.wh.key.events"
SHORT_TTL_SECONDS = 2.0
SLACK_SECONDS = 3.0  # a loaded machine's scheduling; without the fix the key lives 10 minutes
WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def slow_api(api_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory) -> Iterator[str]:
    """The api on the suite's database with a 10-minute key cache and no broker (no key events)."""
    env = {**api_env, "KEY_CACHE_TTL_SECONDS": "600"}
    env.pop("AMQP_URL", None)
    log = tmp_path_factory.mktemp("slow-api") / "api.log"
    with api_server(env, tls_files, log) as origin:
        yield origin


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    with fresh_vhost("dps_wh_key_events") as url:
        yield url


@pytest.fixture
def member(admin: Admin, api_org: Org) -> Member:
    """A key of its own to revoke (never the suite's shared ones)."""
    return admin.member(api_org.id, "admin", f"revoked-{uuid4().hex[:8]}@acme.example")


@pytest.fixture
def dispatcher(make_settings: Callable[..., Settings], slow_api: str) -> Callable[..., IntrospectingAuthenticator]:
    def make(**overrides: str) -> IntrospectingAuthenticator:
        return key_authenticator(make_settings(API_URL=slow_api, **overrides))

    return make


def accepts(authenticator: IntrospectingAuthenticator, key: str) -> bool:
    try:
        authenticator.authenticate(key)
    except Unauthorized:
        return False
    return True


def warm_the_api_cache(slow_api: str, tls_files: dict[str, str], key: str) -> None:
    resp = requests.get(f"{slow_api}/external/v1/whoami", headers={"x-api-key": key}, verify=tls_files["ca"], timeout=10)
    assert resp.status_code == 200


def test_a_revoked_key_stops_within_the_dispatchers_ttl_from_the_revocation_without_events(
    dispatcher, member, admin, slow_api, tls_files
):
    authenticator = dispatcher(KEY_CACHE_TTL_SECONDS=str(SHORT_TTL_SECONDS))
    late = dispatcher(KEY_CACHE_TTL_SECONDS="600")  # another worker, asked first after the revocation
    warm_the_api_cache(slow_api, tls_files, member.key)  # the api's own cache holds the key for 10 minutes
    assert accepts(authenticator, member.key)  # cached here for 2 s

    admin.revoke_key(member.key_row_id)
    revoked_at = time.monotonic()

    assert not accepts(late, member.key)  # the api answered from its database, not from its cache
    while accepts(authenticator, member.key):
        assert time.monotonic() - revoked_at < SHORT_TTL_SECONDS + SLACK_SECONDS, "the key outlived the bound"
        time.sleep(0.05)


@pytest.fixture
def subscribed(dispatcher, make_settings, amqp_url) -> Iterator[IntrospectingAuthenticator]:
    """A worker's authenticator with the spec's longest TTL, subscribed to key events as
    ``build_http(key_events=True)`` subscribes it in each gunicorn worker."""
    authenticator = dispatcher(KEY_CACHE_TTL_SECONDS="600", AMQP_URL=amqp_url, EVENTS_EXCHANGE=EXCHANGE)
    settings = make_settings(AMQP_URL=amqp_url, EVENTS_EXCHANGE=EXCHANGE)
    subscriber = start_key_events(settings.amqp_url, settings.events_exchange, authenticator)
    assert subscriber is not None and subscriber.subscribed.wait(WAIT_SECONDS)
    yield authenticator
    subscriber.stop()


@pytest.fixture(scope="module")
def api_outbox(api_env: dict[str, str]) -> Iterator[Transactions]:
    with committed(api_env["DATABASE_URL"], "dps-wh-key-events-test") as tx:
        yield tx


def relay_key_event(api_outbox: Transactions, amqp_url: str, event_type: str, key_id: str) -> None:
    """What the api's relay does with the event the admin command line recorded."""
    with api_outbox() as session:
        [envelope] = session.execute(
            select(OUTBOX.c.envelope).where(OUTBOX.c.event_type == event_type, OUTBOX.c.envelope["data"]["keyId"].astext == key_id)
        ).scalars()
    publisher = EventPublisher(amqp_url, EXCHANGE)
    try:
        publish_one(publisher, envelope)
    finally:
        publisher.close()


def test_a_revoked_key_stops_at_once_when_the_key_event_arrives(subscribed, member, admin, api_outbox, amqp_url):
    assert accepts(subscribed, member.key)  # cached for 10 minutes
    admin.revoke_key(member.key_row_id)
    assert accepts(subscribed, member.key)  # no event yet: the cache holds it
    relay_key_event(api_outbox, amqp_url, KEY_REVOKED, member.key.split("_")[1])
    deadline = time.monotonic() + WAIT_SECONDS
    while accepts(subscribed, member.key):
        assert time.monotonic() < deadline, "the key event never reached the dispatcher's cache"
        time.sleep(0.02)


def test_a_rotated_key_stops_at_once_when_the_key_event_arrives(subscribed, member, admin, api_outbox, amqp_url):
    assert accepts(subscribed, member.key)
    rotated = admin.rotate_key(member.key_row_id)
    relay_key_event(api_outbox, amqp_url, KEY_ROTATED, member.key.split("_")[1])
    deadline = time.monotonic() + WAIT_SECONDS
    while accepts(subscribed, member.key):
        assert time.monotonic() < deadline, "the key event never reached the dispatcher's cache"
        time.sleep(0.02)
    assert accepts(subscribed, rotated["key"])


def test_a_wrong_secret_under_a_valid_key_id_does_not_evict_the_valid_answer(dispatcher, member, admin):
    """The cache holds one answer per key id (what key events name): a wrong secret is checked with
    the api each time and never replaces the valid key's cached answer."""
    authenticator = dispatcher(KEY_CACHE_TTL_SECONDS="600")
    assert accepts(authenticator, member.key)
    forged = member.key[:-4] + ("AAAA" if not member.key.endswith("AAAA") else "BBBB")
    assert not accepts(authenticator, forged)
    assert not accepts(authenticator, forged)
    admin.revoke_key(member.key_row_id)  # no event: only a new question to the api would notice
    assert accepts(authenticator, member.key)  # still the cached answer: the forgeries did not replace it
    authenticator.forget(member.key.split("_")[1])  # what the key event does
    assert not accepts(authenticator, member.key)
