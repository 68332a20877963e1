"""The delivery worker rides out a database outage (``dps_common.db_retry.OutageLog``): its login is
refused and its sessions ended for a few seconds while a delivery is queued; the worker logs the
outage once and its end once (not a traceback per poll), stays alive, and delivers once it is back."""

from __future__ import annotations

import logging
import time

import pytest

from dps_common.db_retry import AVAILABLE_AGAIN_MESSAGE, UNAVAILABLE_MESSAGE
from dps_testing.connection_kills import private_login
from dps_testing.webhook_receiver import Receiver

from webhook_helpers import Store, running_worker, webhook_database

OUTAGE_SECONDS = 3.0  # a dozen polls at the poll below
QUICK = {"WEBHOOK_RETRY_JITTER": "0", "WEBHOOK_POLL_INTERVAL_SECONDS": "0.25", "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2"}


@pytest.fixture(scope="module")
def database():
    with webhook_database() as url:
        yield url


def test_the_delivery_worker_logs_an_outage_once_and_delivers_what_was_queued_during_it(
    make_settings, database, tls_files, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dps")
    store = Store(make_settings(DATABASE_URL=database))
    try:
        with Receiver(tls_files) as receiver, private_login(database) as login:
            endpoint_id, secret = store.endpoint(receiver.url("/outage", host="localhost"))
            receiver.secrets.append(secret)
            with running_worker(make_settings(DATABASE_URL=login.url, **QUICK)) as worker:
                with login.refused():
                    _, delivery_id = store.event_for(endpoint_id)
                    time.sleep(OUTAGE_SECONDS)
                    assert store.delivery_row(delivery_id)["status"] == "PENDING"
                row = store.wait_for_status(delivery_id, "SUCCESS", timeout=30)
                assert not worker.stopping.is_set()
            [request] = receiver.requests_to("/outage")
            assert request.verified and row["attempt_count"] == 1
    finally:
        store.close()
    loop = [r for r in caplog.records if getattr(r, "part", None) == "delivery loop"]
    assert [r.getMessage() for r in loop] == [UNAVAILABLE_MESSAGE, AVAILABLE_AGAIN_MESSAGE]
    assert not [r for r in caplog.records if r.name == "dps.webhooks.worker" and r.exc_info]
