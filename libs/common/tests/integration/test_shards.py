"""The events stream in shards by organization (issue 19): a stable shard per organization, routing
keys that carry it, a relay that publishes each organization's events to its shard's queue in order,
and subscribers that hear an event whether it was published sharded or not. The relay fixtures and
helpers are the relay tests' (``test_outbox_relay``)."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from uuid import UUID, uuid4

from kombu import Queue
from test_outbox_relay import (  # noqa: F401  (fixtures used by name)
    EXCHANGE,
    amqp_url,
    database_url,
    make_relay,
    relay_tx,
    running,
    tx,
    wait_until_published,
)

from dps_common.messaging import EventPublisher, OutgoingEvent, connect, events_exchange
from dps_common.messaging.shards import routing_key, shard_binding, shard_of, subscriber_bindings
from dps_common.messaging.subscriber import Subscriber
from dps_common.outbox import record_event
from dps_common.outbox.relay import RelaySettings

ORGANIZATION = UUID("0191d5a0-0000-7000-8000-000000000001")


def test_an_organizations_shard_is_stable_and_organizations_spread_over_the_shards() -> None:
    assert (shard_of(ORGANIZATION, 4), shard_of(ORGANIZATION, 16)) == (1, 5)  # the same on every host, every run
    assert shard_of(ORGANIZATION, 1) == 0
    spread = Counter(shard_of(uuid4(), 4) for _ in range(4000))
    assert set(spread) == {0, 1, 2, 3} and min(spread.values()) > 800


def test_routing_keys_are_the_bare_type_with_one_shard_and_carry_the_shard_with_more() -> None:
    assert routing_key("quote.updated", ORGANIZATION, 1) == "quote.updated"
    assert routing_key("quote.updated", ORGANIZATION, 4) == "quote.updated.shard-1"
    assert shard_binding(1) == "#.shard-1"
    assert subscriber_bindings(("internal.key.revoked",)) == ["internal.key.revoked", "internal.key.revoked.*"]


def test_the_relay_publishes_each_organizations_events_to_its_shard_in_order(tx, amqp_url, make_relay) -> None:  # noqa: F811
    shards = 4
    queues = [
        Queue(f"shard-test-{uuid4().hex[:8]}-{shard}", exchange=events_exchange(EXCHANGE), routing_key=shard_binding(shard),
              durable=True)
        for shard in range(shards)
    ]
    with connect(amqp_url) as connection:
        for queue in queues:
            queue(connection.default_channel).declare()
    organizations = [uuid4() for _ in range(12)]
    written: dict[UUID, list[UUID]] = defaultdict(list)
    for n in range(5):  # interleaved: one transaction per event, as requests would commit them
        for organization in organizations:
            with tx() as session:
                written[organization].append(
                    record_event(session, "quote.updated", organization, {"n": n}, datetime.now(UTC))
                )
    try:
        with running(make_relay(shards=shards, linger_seconds=0)):
            wait_until_published(tx, [event for events in written.values() for event in events])
        received: dict[int, list[dict]] = {}
        with connect(amqp_url) as connection:
            for shard, queue in enumerate(queues):
                bound = queue(connection.default_channel)
                received[shard] = []
                while (message := bound.get(no_ack=True)) is not None:
                    received[shard].append(json.loads(message.body))
                    assert message.delivery_info["routing_key"] == f"quote.updated.shard-{shard}"
    finally:
        with connect(amqp_url) as connection:
            for queue in queues:
                queue(connection.default_channel).delete()
    for organization, events in written.items():
        shard = shard_of(organization, shards)
        in_its_shard = [UUID(e["id"]) for e in received[shard] if UUID(e["organizationId"]) == organization]
        assert in_its_shard == events  # all of them, once, in the order they were written
        assert all(UUID(e["organizationId"]) != organization for s, es in received.items() if s != shard for e in es)
    assert len({shard_of(organization, shards) for organization in organizations}) > 1


def test_a_subscriber_to_an_event_type_hears_it_published_sharded_or_not(amqp_url) -> None:  # noqa: F811
    heard: list[str] = []
    subscriber = Subscriber(amqp_url, EXCHANGE, ["internal.test.ping"], lambda body: heard.append(json.loads(body)["n"]),
                            purpose="shard-test")
    subscriber.start()
    try:
        assert subscriber.subscribed.wait(30)
        publisher = EventPublisher(amqp_url, EXCHANGE)
        try:
            for n, key in enumerate(("internal.test.ping", "internal.test.ping.shard-3")):
                event = OutgoingEvent(str(uuid4()), "internal.test.ping", json.dumps({"n": n}), None, key)
                assert publisher.publish_batch([event]).failure is None
        finally:
            publisher.close()
        deadline = time.monotonic() + 30
        while len(heard) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        subscriber.stop()
    assert sorted(heard) == [0, 1]


def test_the_shards_are_a_setting() -> None:
    required = {"DATABASE_URL": "postgresql://u@h/db"}
    assert RelaySettings.from_env(required).shards == 1
    assert RelaySettings.from_env({**required, "EVENTS_SHARDS": "8"}).shards == 8


def test_the_filesystem_transport_of_make_run_routes_shards_too(tmp_path) -> None:
    url = f"filesystem://{tmp_path}"
    queue = Queue("fs-shard-1", exchange=events_exchange(EXCHANGE), routing_key=shard_binding(1), durable=True)
    with connect(url) as connection:
        queue(connection.default_channel).declare()
    publisher = EventPublisher(url, EXCHANGE)
    try:
        to_shard = [OutgoingEvent(str(uuid4()), "quote.updated", json.dumps({"n": n}), None, f"quote.updated.shard-{n}")
                    for n in (1, 0)]
        published = publisher.publish_batch(to_shard)
    finally:
        publisher.close()
    assert published.confirmed == [to_shard[0].id]  # shard 0 has no queue here: not routed, not confirmed
    assert published.failure is not None
    with connect(url) as connection:
        message = queue(connection.default_channel).get(no_ack=True)
    assert message is not None and json.loads(message.body) == {"n": 1}
