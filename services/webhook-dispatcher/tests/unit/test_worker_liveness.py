"""The worker's liveness (its ``/healthz``): alive while the delivery loop turns and the consumer and
retention threads run; the threads ending is expected once the worker is stopping."""

import threading

from dps_common.process_server import Heartbeat

from dps_webhooks.composition import liveness
from dps_webhooks.settings import Settings
from dps_webhooks.workers.deliveries import DeliveryWorker


def worker() -> DeliveryWorker:
    settings = Settings(
        database_url="postgresql://unused",
        cursor_secret=bytes(32),
        secret_key=bytes(32),
        api_url="https://127.0.0.1:9",
        internal_api_token="unused-internal-token-0123456789abcdef",
    )
    return DeliveryWorker(settings, tx=None, database_url="")  # the loop is not run: no database


def thread(name: str, *, running: threading.Event | None = None) -> threading.Thread:
    """A started thread: running until ``running`` is set, or already finished without it."""
    part = threading.Thread(target=running.wait if running else lambda: None, name=name, daemon=True)
    part.start()
    if running is None:
        part.join()
    return part


def test_alive_while_the_parts_run_and_not_once_one_has_ended():
    release = threading.Event()
    one = worker()
    retention = thread("webhook-retention", running=release)
    try:
        assert liveness(one, [retention])() is None
        assert liveness(one, [retention, thread("webhook-consumer")])() == "the webhook-consumer thread is not running"
    finally:
        release.set()


def test_parts_ending_while_stopping_are_expected():
    one = worker()
    one.stop()
    assert liveness(one, [thread("webhook-consumer")])() is None


def test_not_alive_when_the_delivery_loop_stops_turning():
    now = [0.0]
    one = worker()
    one.heartbeat = Heartbeat("delivery loop", one.heartbeat.stale_after / 5, clock=lambda: now[0])  # as the worker's
    now[0] += 29
    assert liveness(one, [])() is None
    now[0] += 2
    assert liveness(one, [])() == "the delivery loop has not turned for 31 s"
    one.stop()  # a stopping worker still turns while it drains: stalling then is no less a problem
    assert liveness(one, [])() == "the delivery loop has not turned for 31 s"
