"""Key events: every subscribing process gets each one and drops the key from its cache, on RabbitMQ
(a fresh virtual host; a private node for the restart) and on the filesystem transport of ``make run``;
a subscription that starts again empties the cache (events published meanwhile were missed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from uuid import uuid4

import pytest
from kombu.entity import Queue

from dps_common.auth.authenticator import Authenticator
from dps_common.auth.cache import KeyRecord, TtlCache
from dps_common.auth.keys import format_key, generate_key_id, generate_secret, hash_secret
from dps_common.auth.principal import Principal
from dps_common.auth.revocations import KEY_REVOKED, KEY_ROTATED, key_event_data, key_event_subscriber
from dps_common.auth.scopes import Role
from dps_common.errors import Unauthorized
from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_common.messaging import Backoff, EventPublisher, connect, events_exchange
from dps_common.messaging.subscriber import Subscriber, queue_name
from dps_testing.broker import private_broker, publish_one, rabbitmqctl
from dps_testing.services import fresh_vhost

PEPPER = b"p" * 32
EXCHANGE = "dps.events"
WAIT_SECONDS = 10  # generous: an answer is expected in milliseconds, the machine is shared


class Keys:
    """A key store of issued keys (what the api's database holds), and one issued key."""

    def __init__(self) -> None:
        self.active: dict[str, KeyRecord] = {}
        self.loads = 0

    def issue(self) -> str:
        key_id, secret = generate_key_id(), generate_secret()
        principal = Principal(uuid4(), "Acme", uuid4(), Role.ADMIN, key_id)
        self.active[key_id] = KeyRecord(hash_secret(PEPPER, secret), principal)
        return format_key(key_id, secret)

    def find(self, key_id: str) -> KeyRecord | None:
        self.loads += 1
        return self.active.get(key_id)


def key_id_of(key: str) -> str:
    return key.split("_")[1]


def event(event_type: str, key: str) -> dict:
    return envelope(event_type, uuid4(), key_event_data(str(uuid4()), key_id_of(key)))


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def rejects(authenticator: Authenticator, key: str) -> bool:
    try:
        authenticator.authenticate(key)
    except Unauthorized:
        return True
    return False


@pytest.fixture(scope="module")
def rabbitmq_url() -> Iterator[str]:
    with fresh_vhost("dps_key_events") as url:
        yield url


@pytest.fixture(params=["rabbitmq", "filesystem"])
def broker_url(request, tmp_path) -> str:
    if request.param == "rabbitmq":
        return str(request.getfixturevalue("rabbitmq_url"))
    return f"filesystem://{tmp_path / 'broker'}"


@pytest.fixture
def publisher(broker_url: str) -> Iterator[EventPublisher]:
    publisher = EventPublisher(broker_url, EXCHANGE)
    yield publisher
    publisher.close()


@pytest.fixture
def subscribed(broker_url: str) -> Iterator[Callable[[Authenticator], Subscriber]]:
    started: list[Subscriber] = []

    def subscribe(authenticator: Authenticator) -> Subscriber:
        subscriber = key_event_subscriber(broker_url, EXCHANGE, authenticator)
        subscriber.start()
        started.append(subscriber)
        assert subscriber.subscribed.wait(WAIT_SECONDS), "not subscribed"
        return subscriber

    yield subscribe
    for subscriber in started:
        subscriber.stop()


def test_every_process_drops_a_revoked_or_rotated_key_at_once(subscribed, publisher):
    keys = Keys()
    revoked, rotated, kept = keys.issue(), keys.issue(), keys.issue()
    processes = [Authenticator(keys, PEPPER, TtlCache(600)) for _ in range(3)]  # a worker each
    for authenticator in processes:
        subscribed(authenticator)
        for key in (revoked, rotated, kept):
            authenticator.authenticate(key)  # cached for 10 minutes
    del keys.active[key_id_of(revoked)], keys.active[key_id_of(rotated)]  # changed in the database

    publish_one(publisher, event(KEY_REVOKED, revoked))
    publish_one(publisher, event(KEY_ROTATED, rotated))

    for authenticator in processes:
        eventually(lambda a=authenticator: rejects(a, revoked) and rejects(a, rotated), "key events not applied")
        assert authenticator.authenticate(kept).key_id == key_id_of(kept)  # other keys stay cached


def test_other_and_malformed_messages_leave_the_cache_alone(subscribed, publisher, broker_url):
    keys = Keys()
    key = keys.issue()
    authenticator = Authenticator(keys, PEPPER, TtlCache(600))
    subscriber = subscribed(authenticator)
    authenticator.authenticate(key)
    loads = keys.loads
    with connect(broker_url) as connection:  # not envelopes: the handler fails, the thread goes on
        producer = connection.Producer()
        for body in ("not json", '{"type": "internal.api_key.revoked", "data": {}}'):
            producer.publish(body, exchange=EXCHANGE, routing_key=KEY_REVOKED, content_type="application/json")
        other = dumps(envelope("quote.created", uuid4(), {"keyId": key_id_of(key)}))  # not bound: never arrives
        producer.publish(other, exchange=EXCHANGE, routing_key="quote.created", content_type="application/json")
    del keys.active[key_id_of(key)]
    publish_one(publisher, event(KEY_REVOKED, key))  # the thread still works after the bad ones
    eventually(lambda: rejects(authenticator, key), "the revocation after the bad messages was not applied")
    assert keys.loads == loads + 1 and subscriber.subscribed.is_set()


def test_stopping_unbinds_the_subscriber(broker_url):
    subscriber = Subscriber(broker_url, EXCHANGE, [KEY_REVOKED], lambda body: None, purpose="test")
    subscriber.start()
    assert subscriber.subscribed.wait(WAIT_SECONDS)
    name = subscriber.queue.name
    assert name in bound_queues(broker_url)
    subscriber.stop()
    eventually(lambda: name not in bound_queues(broker_url), "still bound after stop")


def bound_queues(broker_url: str) -> set[str]:
    if broker_url.startswith("filesystem:"):
        with connect(broker_url) as connection:
            return {entry.queue for entry in connection.default_channel.get_table(EXCHANGE)}
    vhost = broker_url.rsplit("/", 1)[1]
    listing = rabbitmqctl("-q", "list_bindings", "-p", vhost, "--no-table-headers", "source_name", "destination_name")
    return {line.split()[1] for line in listing.stdout.splitlines() if line.startswith(EXCHANGE)}


def test_filesystem_bindings_of_a_killed_process_are_pruned(tmp_path):
    """``make run``'s broker has no auto-delete queues: a worker killed before it could unbind
    leaves its binding (every later event would be copied to it forever) until another starts."""
    url = f"filesystem://{tmp_path / 'broker'}"
    script = (
        "import sys, time; from dps_common.messaging.subscriber import Subscriber;"
        f"s = Subscriber({url!r}, {EXCHANGE!r}, [{KEY_REVOKED!r}], print, purpose='test'); s.start();"
        "s.subscribed.wait(10); print(s.queue.name, flush=True); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        dead = child.stdout.readline().strip()  # type: ignore[union-attr]
    finally:
        child.kill()
        child.wait()
    assert dead and dead in bound_queues(url)
    foreign = "someone-else.queue"
    with connect(url) as connection:  # a queue that is not a subscriber's is never touched
        Queue(foreign, events_exchange(EXCHANGE), routing_key="#")(connection.default_channel).declare()
    subscriber = Subscriber(url, EXCHANGE, [KEY_REVOKED], lambda body: None, purpose="test")
    subscriber.start()
    try:
        assert subscriber.subscribed.wait(WAIT_SECONDS)
        assert bound_queues(url) == {subscriber.queue.name, foreign}
    finally:
        subscriber.stop()


def test_queue_names_name_the_process():
    assert f".{os.getpid()}." in queue_name("key-events")


def test_a_resubscription_after_a_broker_restart_empties_the_cache():
    """Events published while the broker was away are lost to this process: once subscribed again
    it forgets every key, so none outlives a revocation it did not hear of; and it hears the next."""
    keys = Keys()
    missed, later = keys.issue(), keys.issue()
    authenticator = Authenticator(keys, PEPPER, TtlCache(600))
    with private_broker() as broker:
        subscriber = key_event_subscriber(broker.url, EXCHANGE, authenticator)
        subscriber._backoff = Backoff(initial=0.1, maximum=0.5)  # reconnect promptly in the test
        subscriber.start()
        try:
            assert subscriber.subscribed.wait(WAIT_SECONDS)
            authenticator.authenticate(missed)
            authenticator.authenticate(later)
            with broker.stopped():
                eventually(lambda: not subscriber.subscribed.is_set(), "the subscriber did not notice the broker stop")
                del keys.active[key_id_of(missed)]  # revoked while the broker is down: no event reaches us
                assert not rejects(authenticator, missed)  # the TTL still bounds it meanwhile
            assert subscriber.subscribed.wait(60), "not subscribed again after the restart"
            assert rejects(authenticator, missed)
            del keys.active[key_id_of(later)]
            publisher = EventPublisher(broker.url, EXCHANGE)
            try:
                publish_one(publisher, event(KEY_REVOKED, later))
            finally:
                publisher.close()
            eventually(lambda: rejects(authenticator, later), "events after the reconnect not applied")
        finally:
            subscriber.stop()


def test_subscribing_never_blocks_the_caller_when_there_is_no_broker():
    subscriber = Subscriber("amqp://guest:guest@127.0.0.1:1//", EXCHANGE, [KEY_REVOKED], print, purpose="test")
    subscriber.start()  # returns at once: the thread keeps trying with backoff
    assert not subscriber.subscribed.is_set()
    assert subscriber.running
    subscriber.stop(timeout=WAIT_SECONDS)
    assert not subscriber.running
