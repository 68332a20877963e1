"""How much the consumer may hand its own worker: four rounds of the worker's threads, fewer when the
lease is short, so that the last one queued still ends (one timeout per round) within its lease."""

import pytest

from dps_webhooks.settings import Settings
from dps_webhooks.workers import deliveries as worker_module
from dps_webhooks.workers.deliveries import DeliveryWorker


def worker(**settings) -> DeliveryWorker:
    return DeliveryWorker(
        Settings(
            database_url="postgresql://unused",
            cursor_secret=bytes(32),
            secret_key=bytes(32),
            api_url="https://127.0.0.1:9",
            internal_api_token="unused-internal-token-0123456789abcdef",
            **settings,
        ),
        tx=None,  # taking on and giving back never touch the database
        database_url="",
    )


@pytest.mark.parametrize(
    ("lease", "timeout", "rounds"),
    [(60, 10, 4), (300, 10, 4), (25, 10, 2), (30, 10, 2), (11, 10, 1)],
)
def test_the_consumer_may_hand_over_up_to_four_rounds_within_the_lease(lease, timeout, rounds):
    threads = 16
    taken = worker(delivery_concurrency=threads, lease_seconds=lease, attempt_timeout_seconds=timeout)
    assert taken.take_on(1000) == rounds * threads


def test_what_is_given_back_can_be_taken_on_again():
    one = worker(delivery_concurrency=1)  # defaults: 60 s lease, 10 s timeout: four rounds
    assert one.take_on(3) == 3
    assert one.take_on(3) == 1
    one.give_back(2)
    assert one.take_on(5) == 2
    one.wait_for_room(0)  # room for nothing is always there: returns at once


def test_once_room_did_not_come_in_time_the_consumer_stops_waiting_until_there_is_room(monkeypatch):
    """A worker held up by slow receivers must not throttle the intake to one batch per wait."""
    monkeypatch.setattr(worker_module, "HAND_OVER_WAIT_SECONDS", 0.05)
    one = worker(delivery_concurrency=1)  # room for four
    assert one.take_on(4) == 4
    one.wait_for_room(1)  # waits the 0.05 s in vain
    assert not one._room_comes_in_time  # the next batches are stored at once, due for any worker
    one.give_back(1)
    one.wait_for_room(1)  # room now: found at once
    assert one._room_comes_in_time  # worth waiting again
