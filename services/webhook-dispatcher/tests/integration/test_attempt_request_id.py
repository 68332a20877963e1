"""The delivery worker's attempt lines carry the request id of the event they deliver (issue 17): an
event published with ``X-Request-Id: req-abc`` is handed over by the consumer to its worker (the
delivery stored already claimed), fails once at a real HTTPS receiver, is claimed again by the worker's
loop for its retry (the claim statement) and delivered; both attempt lines, as the JSON formatter
writes them on the worker's threads, say ``"requestId": "req-abc"``."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest

from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_common.logs import JsonLineFormatter
from dps_common.messaging import EventPublisher, OutgoingEvent, connect
from dps_testing.services import fresh_vhost
from dps_testing.transactions import committed
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.adapters import events_queue as queue_module
from dps_webhooks.settings import Settings
from dps_webhooks.workers.consumers import EventConsumer

from webhook_helpers import Store, running_worker, webhook_database, worker_process_env

EXCHANGE = "test.wh.attempt-request-id.events"
WAIT_SECONDS = 60


class JsonLines(logging.Handler):
    """The lines as the process would write them, formatted on the thread that logs (where the
    bound request id is), not later on the test's."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.setFormatter(JsonLineFormatter())
        self.lines: list[dict] = []
        self._lock_lines = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        line = json.loads(self.format(record))
        with self._lock_lines:
            self.lines.append(line)

    def about(self, delivery_id: str) -> list[dict]:
        with self._lock_lines:
            return [line for line in self.lines if line.get("deliveryId") == delivery_id]


@pytest.fixture
def worker_lines() -> Iterator[JsonLines]:
    logger = logging.getLogger("dps.webhooks.worker")
    handler, level = JsonLines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture(scope="module")
def receiver(tls_files: dict[str, str]) -> Iterator[Receiver]:
    with Receiver(tls_files) as receiver:
        yield receiver


@pytest.fixture
def settings(tls_files: dict[str, str]) -> Iterator[Settings]:
    with webhook_database("dps_wh_attempt_rid") as database, fresh_vhost("dps_wh_attempt_rid") as amqp_url:
        env = worker_process_env(
            database,
            amqp_url,
            tls_files["ca"],
            EVENTS_EXCHANGE=EXCHANGE,
            EVENTS_QUEUE="test.wh.attempt-request-id",
            WEBHOOK_RETRY_GAPS_SECONDS="0.5",  # the retry comes at once: the loop claims it
            WEBHOOK_RETRY_JITTER="0",
            WEBHOOK_ATTEMPT_TIMEOUT_SECONDS="5",
        )
        settings = Settings.from_env(env)
        with connect(amqp_url) as connection:
            queue_module.events_queue(settings)(connection.default_channel).declare()
        yield settings


def test_each_attempt_line_carries_the_request_id_of_its_event(
    settings: Settings, receiver: Receiver, worker_lines: JsonLines
) -> None:
    store = Store(settings)
    try:
        organization_id = uuid4()
        path = f"/attempt-request-id-{uuid4().hex[:8]}"
        endpoint_id, secret = store.endpoint(receiver.url(path, host="localhost"), organization_id=organization_id)
        receiver.secrets.append(secret)
        receiver.answer(path, 500, 200)  # the first attempt fails, its retry succeeds
        event = envelope("quote.approved", organization_id, {"id": str(uuid4())})
        with running_worker(settings) as worker, committed(settings.database_url, "dps-wh-attempt-rid") as tx:
            stop = threading.Event()
            consumer = EventConsumer(settings, tx, hand_over=worker)  # as the worker process puts them together
            thread = threading.Thread(target=consumer.run, args=(stop,), daemon=True)
            thread.start()
            try:
                publisher = EventPublisher(settings.amqp_url, EXCHANGE)
                try:
                    message = OutgoingEvent(event["id"], event["type"], dumps(event), {"X-Request-Id": "req-abc"})
                    publisher.publish_batch([message])
                finally:
                    publisher.close()
                receiver.wait_for(2, path, timeout=WAIT_SECONDS)
                delivery_id = str(store.delivery_of(UUID(str(event["id"])), endpoint_id))
                deadline = time.monotonic() + WAIT_SECONDS
                while len(worker_lines.about(delivery_id)) < 2:
                    assert time.monotonic() < deadline, f"the worker logged {worker_lines.about(delivery_id)}"
                    time.sleep(0.05)
            finally:
                stop.set()
                thread.join(timeout=30)
        assert not thread.is_alive(), "the consumer did not stop when asked"
    finally:
        store.close()
    failed, delivered = worker_lines.about(delivery_id)
    assert (failed["message"], failed["attempt"], failed["responseStatus"]) == ("delivery attempt failed", 1, 500)
    assert (delivered["message"], delivered["attempt"], delivered["status"]) == ("delivery attempted", 2, "SUCCESS")
    assert failed["requestId"] == delivered["requestId"] == "req-abc"
    assert failed["eventId"] == delivered["eventId"] == str(event["id"])
