"""The dispatcher's shard settings (issue 19): one queue without shards; with ``EVENTS_SHARDS`` a
queue per shard, this worker first on the shards it is given and a stand-by on the others."""

import pytest

from dps_common.crypto import new_key
from dps_common.settings import SettingsError

from dps_webhooks.settings import Settings
from dps_webhooks.workers.consumers import STANDBY_DELAY_SECONDS, shard_consumers

REQUIRED = {
    "DATABASE_URL": "postgresql://u@h/db",
    "CURSOR_SECRET": "c" * 32,
    "WEBHOOK_SECRET_KEY": new_key(),
    "API_URL": "https://api.example",
    "INTERNAL_API_TOKEN": "t" * 32,
}


def queues(settings: Settings) -> list[tuple[str, str, float]]:
    return [(c.queue.name, c.queue.routing_key, c.standby_seconds) for c in shard_consumers(settings, tx=None)]


def test_without_shards_one_queue_takes_every_event():
    assert queues(Settings.from_env(REQUIRED)) == [("webhook-dispatcher.events", "#", 0.0)]


def test_a_worker_consumes_every_shard_and_joins_those_it_was_not_given_later():
    settings = Settings.from_env({**REQUIRED, "EVENTS_SHARDS": "3", "WEBHOOK_CONSUMER_SHARDS": "2,0"})
    assert queues(settings) == [
        ("webhook-dispatcher.events.shard-0", "#.shard-0", 0.0),
        ("webhook-dispatcher.events.shard-1", "#.shard-1", STANDBY_DELAY_SECONDS),
        ("webhook-dispatcher.events.shard-2", "#.shard-2", 0.0),
    ]
    every = Settings.from_env({**REQUIRED, "EVENTS_SHARDS": "2"})
    assert [standby for _, _, standby in queues(every)] == [0.0, 0.0]


@pytest.mark.parametrize("shards", ["2", "x", "-1"])
def test_a_worker_is_given_shards_that_exist(shards):
    with pytest.raises(SettingsError, match="WEBHOOK_CONSUMER_SHARDS"):
        Settings.from_env({**REQUIRED, "EVENTS_SHARDS": "2", "WEBHOOK_CONSUMER_SHARDS": shards})
