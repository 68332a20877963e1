"""The relay lingers after a notification (issue 19): commits that trickle in meanwhile are published
in one batch, one transaction and one wait for the broker's confirms, instead of one turn each.
The fixtures and helpers are the relay tests' (``test_outbox_relay``)."""

from __future__ import annotations

import time
from uuid import UUID

from test_outbox_relay import (  # noqa: F401  (fixtures used by name)
    amqp_url,
    database_url,
    drain,
    make_relay,
    queue,
    relay_metrics,
    relay_tx,
    running,
    tx,
    wait_until_published,
    write_events,
)

from dps_common.outbox.relay import RelaySettings


def test_commits_that_trickle_in_while_the_relay_lingers_are_published_in_one_batch(
    tx, queue, amqp_url, make_relay  # noqa: F811
) -> None:
    relay = make_relay(poll_interval_seconds=60, linger_seconds=1.0)  # the setting's longest
    with running(relay):
        time.sleep(1)  # idle, waiting for a notification
        batches = relay_metrics()["confirmed batches"] or 0.0
        ids = []
        for _ in range(3):  # three transactions, three notifications, apart in time
            ids += write_events(tx, 1)
            time.sleep(0.1)
        wait_until_published(tx, ids)
        assert relay_metrics()["confirmed batches"] - batches == 1
    assert sorted(UUID(event["id"]) for event in drain(amqp_url, queue)) == sorted(ids)


def test_the_linger_is_a_setting() -> None:
    required = {"DATABASE_URL": "postgresql://u@h/db"}
    assert RelaySettings.from_env(required).linger_seconds == 0.1
    assert RelaySettings.from_env({**required, "RELAY_LINGER_SECONDS": "0"}).linger_seconds == 0.0
