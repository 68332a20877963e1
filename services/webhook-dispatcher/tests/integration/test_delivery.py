"""The delivery engine end to end on a committed database: a worker thread, a real HTTPS receiver
verifying signatures, the retry schedule compressed to seconds."""

from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from dps_webhooks.domain.request_headers import request_headers
from dps_webhooks.services.intake import accept_events

from webhook_helpers import incoming, running_worker, webhook_database

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
    # kept as sent, for the delivery view: the headers rebuilt from them are the ones the receiver got
    assert str(attempt["webhook_timestamp"]) == request.headers["webhook-timestamp"]
    assert attempt["webhook_signature"] == request.headers["webhook-signature"]
    rebuilt = request_headers(
        event_id=event.id,
        delivery_id=delivery_id,
        attempt=1,
        timestamp=attempt["webhook_timestamp"],
        signature=attempt["webhook_signature"],
    )
    assert {name.lower(): value for name, value in rebuilt.items()}.items() <= request.headers.items()


def test_the_failure_catalogue_is_recorded_on_the_delivery_and_its_attempt(store, receiver, settings_for):
    expected = {
        "/500": (500, "FAILED", "The receiver answered 500; only 2xx counts as delivered."),
        "/410": (410, "FAILED", "The receiver answered 410; only 2xx counts as delivered."),
        "/302": (302, "FAILED", "The receiver answered 302; redirects are not followed."),
        "/hang": (None, "FAILED", "Timed out after 2 s."),
        "/drip": (None, "FAILED", "Timed out after 2 s."),
        "/drip-body": (200, "FAILED", "Timed out after 2 s reading the response body."),
        "/reset": (None, "FAILED", "The receiver reset the connection."),
        "/huge": (200, "SUCCESS", None),
    }
    deliveries = {}
    for path in expected:
        endpoint_id, _ = new_endpoint(store, receiver, path)
        deliveries[path] = store.event_for(endpoint_id)[1]
    with running_worker(settings_for(**NO_RETRY)):
        rows = {
            path: store.wait_for_status(delivery_id, "FAILED", "SUCCESS") for path, delivery_id in deliveries.items()
        }
    for path, (status, delivery_status, message) in expected.items():
        row = rows[path]
        assert (row["last_response_status"], row["status"], row["last_error_message"]) == (
            status,
            delivery_status,
            message,
        )
        assert row["attempt_count"] == 1 and row["claim_token"] is None
        [attempt] = store.attempts(deliveries[path])
        assert (attempt["response_status"], attempt["error_message"]) == (status, message)
        assert attempt["duration_ms"] == row["last_duration_ms"]
        if delivery_status == "FAILED":
            assert row["next_attempt_at"] is not None and row["completed_at"] is None
    assert rows["/huge"]["last_response_excerpt"] == "x" * 4096
    assert rows["/500"]["last_response_excerpt"] == '{"error": "nope"}'
    assert len(receiver.requests_to("/ok")) == 0  # the 302's Location was not followed


def test_eight_failed_attempts_exhaust_the_delivery(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/always-500")
    receiver.answer("/always-500", 500)
    event, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**ALL_AT_ONCE)):
        row = store.wait_for_status(delivery_id, "EXHAUSTED")
    requests = receiver.requests_to("/always-500")
    assert [request.attempt for request in requests] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert all(request.verified and request.event_id == str(event.id) for request in requests)
    attempts = store.attempts(delivery_id)
    assert [(a["attempt"], a["response_status"]) for a in attempts] == [(n, 500) for n in range(1, 9)]
    assert row["attempt_count"] == 8 and row["next_attempt_at"] is None and row["completed_at"] is not None
    assert row["last_response_status"] == 500 and row["last_response_excerpt"] == '{"error": "nope"}'
    assert row["last_error_message"] == "The receiver answered 500; only 2xx counts as delivered."
    assert row["last_attempted_at"] == attempts[-1]["attempted_at"]
    assert row["last_duration_ms"] == attempts[-1]["duration_ms"]
    assert store.endpoint_row(endpoint_id)["consecutive_failures"] == 1
    assert store.endpoint_row(endpoint_id)["status"] == "ACTIVE"


def test_a_success_after_failures_resets_the_endpoints_count(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/flaky")
    store.sql("UPDATE webhook_endpoints SET consecutive_failures = 7 WHERE id = :id", id=endpoint_id)
    receiver.answer("/flaky", 500, 503, 200)
    _, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**ALL_AT_ONCE)):
        row = store.wait_for_status(delivery_id, "SUCCESS")
    assert [a["response_status"] for a in store.attempts(delivery_id)] == [500, 503, 200]
    assert [r.attempt for r in receiver.requests_to("/flaky")] == [1, 2, 3]
    assert all(r.verified for r in receiver.requests_to("/flaky"))  # signed anew for each attempt
    assert row["last_error_message"] is None and row["attempt_count"] == 3
    assert store.endpoint_row(endpoint_id)["consecutive_failures"] == 0


def test_twenty_exhausted_deliveries_disable_the_endpoint(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/down")
    receiver.answer("/down", 500)
    deliveries = [store.event_for(endpoint_id)[1] for _ in range(20)]
    with running_worker(settings_for(**ALL_AT_ONCE)):
        store.wait_until(lambda: store.endpoint_row(endpoint_id)["status"] == "DISABLED", what="the endpoint disabled")
        rows = [store.wait_for_status(delivery_id, "EXHAUSTED") for delivery_id in deliveries]
    endpoint = store.endpoint_row(endpoint_id)
    assert endpoint["consecutive_failures"] == 20
    assert endpoint["disabled_reason"] == "Disabled after 20 consecutive failed deliveries."
    assert all(row["attempt_count"] == 8 for row in rows)
    assert len(receiver.requests_to("/down")) == 160


def test_the_next_attempt_after_a_rotation_is_signed_with_the_new_secret_only(store, receiver, settings_for):
    endpoint_id, old_secret = new_endpoint(store, receiver, "/rotating")
    receiver.answer("/rotating", 500, 200)
    _, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**NO_RETRY)):
        store.wait_for_status(delivery_id, "FAILED")
    new_secret = store.rotate(endpoint_id)
    store.sql("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = :id", id=delivery_id)  # an hour later
    with running_worker(settings_for(**NO_RETRY)):
        store.wait_for_status(delivery_id, "SUCCESS")
    first, second = receiver.requests_to("/rotating")
    Webhook(old_secret).verify(first.body, first.headers)
    Webhook(new_secret).verify(second.body, second.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old_secret).verify(second.body, second.headers)
    assert second.attempt == 2


def test_a_paused_endpoint_holds_deliveries_but_sends_tests_and_resuming_delivers(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/pausable")
    store.set_status(endpoint_id, "PAUSED")
    event, held_id = store.event_for(endpoint_id)
    test_event, test_id = store.test_delivery(endpoint_id)
    with running_worker(settings_for(**QUICK)):
        store.wait_for_status(test_id, "SUCCESS")
        [sent] = receiver.requests_to("/pausable")
        assert sent.event_id == str(test_event.id)
        held = store.delivery_row(held_id)
        assert (held["status"], held["next_attempt_at"], held["attempt_count"]) == ("PENDING", None, 0)
        store.set_status(endpoint_id, "ACTIVE")
        store.wait_for_status(held_id, "SUCCESS")
    assert [r.event_id for r in receiver.requests_to("/pausable")] == [str(test_event.id), str(event.id)]


def test_a_retry_is_held_when_the_endpoint_was_paused_during_the_attempt(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/pause-midway")
    receiver.answer("/pause-midway", "hang", 200)
    _, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**ALL_AT_ONCE)):
        receiver.wait_for(1, "/pause-midway")
        store.set_status(endpoint_id, "PAUSED")
        row = store.wait_for_status(delivery_id, "FAILED")
        assert row["next_attempt_at"] is None  # held, although its retry gap is 0
        assert row["last_error_message"] == "Timed out after 2 s."
        store.set_status(endpoint_id, "ACTIVE")
        row = store.wait_for_status(delivery_id, "SUCCESS")
    assert row["attempt_count"] == 2


def test_a_url_that_resolves_to_loopback_is_refused_at_attempt_time(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/ssrf")
    _, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**NO_RETRY, WEBHOOK_ALLOWED_NETWORKS="")):
        row = store.wait_for_status(delivery_id, "FAILED")
    assert row["last_error_message"] == "The URL was refused: host resolves to a loopback address (127.0.0.1)."
    assert row["last_response_status"] is None
    assert receiver.requests_to("/ssrf") == []


def test_stopping_the_worker_finishes_the_attempt_in_flight_and_records_it(store, receiver, settings_for):
    endpoint_id, _ = new_endpoint(store, receiver, "/in-flight-at-stop")
    receiver.answer("/in-flight-at-stop", "hang")
    _, delivery_id = store.event_for(endpoint_id)
    with running_worker(settings_for(**NO_RETRY)):
        receiver.wait_for(1, "/in-flight-at-stop")
    row = store.delivery_row(delivery_id)  # the worker has returned: nothing is waited for
    assert (row["status"], row["claim_token"], row["attempt_count"]) == ("FAILED", None, 1)
    assert row["last_error_message"] == "Timed out after 2 s."
    assert [a["error_message"] for a in store.attempts(delivery_id)] == ["Timed out after 2 s."]


def test_deliveries_the_consumer_hands_over_are_stored_claimed_and_sent_without_a_claim(store, receiver, settings_for):
    """What the consumer stores for its own worker (up to four rounds of its threads) is claimed
    already: polling and claiming cannot take it, only ``start`` sends it. The rest is due for anyone."""
    paths = [f"/handed-over-{n}" for n in range(1, 6)]
    organization_id = store.endpoint_row(new_endpoint(store, receiver, paths[0])[0])["organization_id"]
    for path in paths[1:]:
        new_endpoint(store, receiver, path, organization_id=organization_id)
    # one thread: four taken on, the fifth left due; polls too rare to matter within the test
    settings = settings_for(**{**QUICK, "WEBHOOK_DELIVERY_CONCURRENCY": "1", "WEBHOOK_POLL_INTERVAL_SECONDS": "60"})
    handed_over = []

    def consume(worker):  # before the loop's first poll, which could claim the unclaimed one meanwhile
        with store.tx() as session:
            accepted = accept_events(
                session, [incoming(organization_id)], take_up_to=worker.take_on, lease_seconds=settings.lease_seconds
            )
        handed_over.append(accepted)

    before = datetime.now(UTC)
    with running_worker(settings, before_start=consume) as worker:
        [accepted] = handed_over
        assert accepted.deliveries == 5 and len(accepted.claimed) == 4
        for claimed in accepted.claimed:
            row = store.delivery_row(claimed.delivery_id)
            assert (row["status"], row["attempt_count"], row["claim_token"]) == ("PENDING", 1, claimed.token)
            assert row["next_attempt_at"] > before + timedelta(seconds=settings.lease_seconds - 5)
        worker.start(accepted.claimed)
        for claimed in accepted.claimed:
            assert store.wait_for_status(claimed.delivery_id, "SUCCESS", timeout=20)["attempt_count"] == 1
        # the fifth was stored due and unclaimed; its NOTIFY woke the loop, which claimed it
        requests = receiver.wait_for(5, where=lambda request: request.path.startswith("/handed-over-"))
    assert sorted(request.path for request in requests) == paths
    assert all(request.verified and request.headers["x-service-attempt"] == "1" for request in requests)
