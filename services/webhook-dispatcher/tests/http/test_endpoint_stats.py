"""``GET /webhook-configs/{id}/stats`` through build_http, against attempts and deliveries written with
known times: every hour of the window (24 or 168, oldest first, zeros included), attempts counted in
the hour they were made (2xx in time succeeded, anything else failed), only this endpoint's, and the
p50/p95 time to success over the deliveries that succeeded in the window (percentile_cont)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from dps_common.events.envelope import envelope
from dps_common.json import dumps

from dps_webhooks.db.models import DeliveryAttempt, WebhookDelivery
from dps_webhooks.schemas.endpoint_stats import WebhookConfigStats
from dps_webhooks.services import intake

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"
HOUR = timedelta(hours=1)


def create(client, org):
    resp = client.simulate_post(BASE, json={"url": URL}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def new_deliveries(tx, org, endpoint, count):
    """``count`` new events (accepted as the consumer does: a delivery to each of the organization's
    endpoints); the ids of ``endpoint``'s deliveries, in order."""
    events = [
        intake.IncomingEvent.from_envelope(
            dumps(envelope("quote.approved", uuid.UUID(org.id), {"n": n})).decode()
        )
        for n in range(count)
    ]
    with tx() as session:
        intake.accept_events(session, events)
        return list(
            session.scalars(
                select(WebhookDelivery.id)
                .where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint["id"]))
                .order_by(WebhookDelivery.id)
            )
        )


def attempted(tx, delivery_id, *attempts):
    """Attempts as the worker records them: (when, status, error); the delivery's last one follows."""
    with tx() as session:
        for number, (at, status, error) in enumerate(attempts, start=1):
            session.add(
                DeliveryAttempt(
                    delivery_id=delivery_id, attempt=number, attempted_at=at, response_status=status,
                    error_message=error, duration_ms=100,
                )
            )  # fmt: skip
        last_at, last_status, last_error = attempts[-1]
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == delivery_id)
            .values(last_attempted_at=last_at, last_response_status=last_status, last_duration_ms=100,
                    attempt_count=len(attempts), status="FAILED", next_attempt_at=None)
        )  # fmt: skip


def succeeded(tx, delivery_id, created_at, answered_after_ms, duration_ms=50):
    """A delivery that succeeded ``answered_after_ms`` after its creation (its attempt's start plus its duration)."""
    attempt_at = created_at + timedelta(milliseconds=answered_after_ms - duration_ms)
    with tx() as session:
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == delivery_id)
            .values(created_at=created_at, status="SUCCESS", last_attempted_at=attempt_at, last_duration_ms=duration_ms,
                    completed_at=attempt_at + timedelta(milliseconds=duration_ms), next_attempt_at=None)
        )  # fmt: skip


def stats(client, org, endpoint, **params):
    resp = client.simulate_get(f"{BASE}/{endpoint['id']}/stats", params=params, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    WebhookConfigStats.model_validate(resp.json)
    return resp.json


def hour_of(moment):
    return moment.replace(minute=0, second=0, microsecond=0)


def test_attempts_are_counted_in_their_hour_with_every_hour_listed(client, org, tx):
    endpoint, other = create(client, org), create(client, org)
    now = datetime.now(UTC)
    base = hour_of(now) - 5 * HOUR  # well inside the window, whatever minute the test runs at
    ids = new_deliveries(tx, org, endpoint, 3)
    attempted(tx, ids[0], (base + timedelta(minutes=1), 500, "The receiver answered 500."),
              (base + timedelta(minutes=59), 503, "The receiver answered 503."),
              (base + HOUR, 200, None))  # fmt: skip
    attempted(tx, ids[1], (base + 2 * HOUR + timedelta(minutes=7), None, "Timed out after 10 s."),
              (base + 2 * HOUR + timedelta(minutes=8), 200, "Timed out after 10 s reading the response body."),
              (base + 2 * HOUR + timedelta(minutes=9), 204, None))  # fmt: skip
    attempted(tx, ids[2], (now - timedelta(days=3), 200, None))  # in the 7 days only
    theirs = new_deliveries(tx, org, other, 0)[0]  # the same events' delivery to the other endpoint
    attempted(tx, theirs, (base, 500, "The receiver answered 500."))  # another endpoint's

    day = stats(client, org, endpoint)
    assert day["webhookConfigId"] == endpoint["id"] and day["window"] == "24h"
    start = datetime.fromisoformat(day["from"])
    hours = [datetime.fromisoformat(h["start"]) for h in day["hours"]]
    assert hours == [start + i * HOUR for i in range(24)] and hours[-1] == hour_of(datetime.fromisoformat(day["until"]))
    counted = {datetime.fromisoformat(h["start"]): (h["succeeded"], h["failed"]) for h in day["hours"]}
    assert counted[base] == (0, 2) and counted[base + HOUR] == (1, 0) and counted[base + 2 * HOUR] == (1, 2)
    assert sum(s + f for s, f in counted.values()) == 6  # every other hour zero
    assert (day["succeeded"], day["failed"]) == (2, 4)

    week = stats(client, org, endpoint, window="7d")
    assert week["window"] == "7d" and len(week["hours"]) == 168
    assert datetime.fromisoformat(week["from"]) == hour_of(datetime.fromisoformat(week["until"])) - 167 * HOUR
    assert (week["succeeded"], week["failed"]) == (3, 4)
    assert week["timeToSuccessMs"] == day["timeToSuccessMs"] == {"p50": None, "p95": None}  # none SUCCESS


def test_time_to_success_percentiles_over_the_deliveries_that_succeeded_in_the_window(client, org, tx):
    endpoint = create(client, org)
    now = datetime.now(UTC)
    ids = new_deliveries(tx, org, endpoint, 7)
    created = now - 3 * HOUR
    for delivery_id, ms in zip(ids, (1000, 2000, 3000, 4000, 10000)):
        succeeded(tx, delivery_id, created, ms)
    succeeded(tx, ids[5], now - timedelta(days=2), 999_999)  # succeeded before the 24 hours: 7 days only
    # ids[6] is still PENDING: not a success
    day = stats(client, org, endpoint)["timeToSuccessMs"]
    # percentile_cont: p50 the middle one; p95 at rank 0.95 * 4 = 3.8, between 4000 and 10000
    assert day == {"p50": 3000, "p95": 8800}
    week = stats(client, org, endpoint, window="7d")["timeToSuccessMs"]
    # six values: p50 at rank 2.5 (3000..4000), p95 at rank 4.75 (10000..999999)
    assert week == {"p50": 3500, "p95": round(10000 + 0.75 * (999_999 - 10000))}


def test_an_endpoint_without_traffic_has_every_hour_at_zero(client, org):
    endpoint = create(client, org)
    day = stats(client, org, endpoint, window="24h")
    assert len(day["hours"]) == 24 and all(h["succeeded"] == h["failed"] == 0 for h in day["hours"])
    assert (day["succeeded"], day["failed"], day["timeToSuccessMs"]) == (0, 0, {"p50": None, "p95": None})


def test_another_window_is_400_and_another_organizations_endpoint_404(client, org, other_org):
    endpoint = create(client, org)
    for window in ("1h", "30d", "24H", ""):
        resp = client.simulate_get(f"{BASE}/{endpoint['id']}/stats", params={"window": window}, headers=org.admin.headers)
        if window == "":  # an empty parameter is no parameter: the default
            assert resp.status_code == 200 and resp.json["window"] == "24h"
            continue
        assert resp.status_code == 400 and resp.json["code"] == "validation_error", window
        assert resp.json["errors"][0]["field"] == "window"
    assert client.simulate_get(f"{BASE}/{endpoint['id']}/stats", headers=other_org.admin.headers).status_code == 404
    assert client.simulate_get(f"{BASE}/{uuid.uuid4()}/stats", headers=org.admin.headers).status_code == 404
