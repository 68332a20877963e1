"""The delivery engine end to end on a committed database: a worker thread, a real HTTPS receiver
verifying signatures, the retry schedule compressed to seconds."""

import pytest

from receiver import Receiver
from webhook_helpers import Store, running_worker, webhook_database

QUICK = {"WEBHOOK_RETRY_JITTER": "0", "WEBHOOK_POLL_INTERVAL_SECONDS": "0.05", "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2"}
NO_RETRY = {**QUICK, "WEBHOOK_RETRY_GAPS_SECONDS": "3600,3600,3600,3600,3600,3600,3600"}
ALL_AT_ONCE = {**QUICK, "WEBHOOK_RETRY_GAPS_SECONDS": "0,0,0,0,0,0,0"}


@pytest.fixture(scope="module")
def database():
    with webhook_database() as url:
        yield url


@pytest.fixture(scope="module")
def settings_for(make_settings, database):
    return lambda **env: make_settings(DATABASE_URL=database, **env)


@pytest.fixture(scope="module")
def store(settings_for):
    store = Store(settings_for())
    yield store
    store.close()


@pytest.fixture(scope="module")
def receiver(tls_files):
    with Receiver(tls_files) as receiver:
        yield receiver


def new_endpoint(store, receiver, path, **kwargs):
    endpoint_id, secret = store.endpoint(receiver.url(path, host="localhost"), **kwargs)
    receiver.secrets.append(secret)
    return endpoint_id, secret


def test_a_2xx_answer_delivers_a_signed_request_with_the_spec_headers(store, receiver, settings_for):
    endpoint_id, secret = new_endpoint(store, receiver, "/signed")
    event, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**QUICK)):
        row = store.wait_for_status(delivery_id, "SUCCESS")
    [request] = receiver.requests_to("/signed")
    assert request.verified
    assert request.body == event.body.encode()
    assert request.headers["webhook-id"] == request.headers["x-service-event-id"] == str(event.id)
    assert request.headers["x-service-delivery-id"] == str(delivery_id)
    assert request.headers["x-service-attempt"] == "1"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["host"] == f"localhost:{receiver.port}"
    assert row["attempt_count"] == 1 and row["next_attempt_at"] is None and row["claim_token"] is None
    assert row["last_response_status"] == 200 and row["last_response_excerpt"] == '{"received": true}'
    assert row["last_error_message"] is None and row["completed_at"] is not None
    assert row["last_attempted_at"] is not None and row["last_duration_ms"] >= 0
    [attempt] = store.attempts(delivery_id)
    assert (attempt["attempt"], attempt["response_status"], attempt["error_message"]) == (1, 200, None)
