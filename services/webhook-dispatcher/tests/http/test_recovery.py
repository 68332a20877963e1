"""``POST /webhook-configs/{id}/recover`` through build_http: each EXHAUSTED delivery of the window gets
one new delivery (retryOf it), oldest first, due one after another at the endpoint's pace; FAILED,
test and already redelivered ones are left alone; at most 1,000 a call with hasMore; held while
PAUSED, 409 while DISABLED or revoked; the window's rules (400 naming the field); Idempotency-Key."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from dps_common.events.envelope import envelope
from dps_common.json import dumps

from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint
from dps_webhooks.schemas.recovery import WebhookRecovery
from dps_webhooks.services import intake

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"


def create(client, org, **fields):
    resp = client.simulate_post(BASE, json={"url": URL, **fields}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def publish(tx, org, count=1, data=None):
    """``count`` events from the api, accepted in one batch as the consumer does; their ids in order."""
    events = [
        intake.IncomingEvent.from_envelope(
            dumps(envelope("quote.approved", uuid.UUID(org.id), data or {"quoteId": str(uuid.uuid4())})).decode()
        )
        for _ in range(count)
    ]
    with tx() as session:
        intake.accept_events(session, events)
    return [event.id for event in events]


def deliveries(tx, endpoint):
    """The endpoint's deliveries as rows, in id order (creation order)."""
    with tx() as session:
        return session.execute(
            select(WebhookDelivery.__table__)
            .where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint["id"]))
            .order_by(WebhookDelivery.id)
        ).all()


def set_deliveries(tx, ids, **values):
    with tx() as session:
        session.execute(update(WebhookDelivery).where(WebhookDelivery.id.in_(ids)).values(**values))


def exhaust(tx, ids, created_at=None):
    extra = {} if created_at is None else {"created_at": created_at}
    set_deliveries(tx, ids, status="EXHAUSTED", attempt_count=8, next_attempt_at=None, **extra)


def set_endpoint(tx, endpoint, **values):
    with tx() as session:
        session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == uuid.UUID(endpoint["id"])).values(**values))


def recover(client, org, endpoint, headers=None, **body):
    return client.simulate_post(
        f"{BASE}/{endpoint['id']}/recover", json=body, headers={**org.admin.headers, **(headers or {})}
    )


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def redeliveries(tx, endpoint):
    return [row for row in deliveries(tx, endpoint) if row.retry_of is not None]


def gaps(rows):
    """Seconds between consecutive due times (the rows in due order)."""
    due = sorted(row.next_attempt_at for row in rows)
    return [round((b - a).total_seconds(), 6) for a, b in zip(due, due[1:])]


def test_each_exhausted_delivery_of_the_window_is_redelivered_once_oldest_first_and_spread(client, org, tx):
    endpoint = create(client, org)
    now = datetime.now(UTC)
    publish(tx, org, count=7)
    rows = deliveries(tx, endpoint)
    ids = [row.id for row in rows]
    # created out of id order: the oldest first is by creation time
    for delivery_id, hours_ago in zip(ids[:3], (1, 3, 2)):
        exhaust(tx, [delivery_id], created_at=now - timedelta(hours=hours_ago))
    exhaust(tx, [ids[3]], created_at=now - timedelta(hours=10))  # before the window
    set_deliveries(tx, [ids[4]], status="FAILED", attempt_count=3, created_at=now - timedelta(hours=2))
    set_deliveries(tx, [ids[5]], status="SUCCESS", attempt_count=1, next_attempt_at=None)
    exhaust(tx, [ids[6]], created_at=now - timedelta(hours=2))
    set_deliveries(tx, [ids[6]], is_test=True)  # a test delivery is not recovered
    before = {row.id: row for row in deliveries(tx, endpoint)}

    resp = recover(client, org, endpoint, since=iso(now - timedelta(hours=5)))
    assert resp.status_code == 202, resp.json
    WebhookRecovery.model_validate(resp.json)
    assert resp.json["recovered"] == 3 and resp.json["hasMore"] is False
    assert datetime.fromisoformat(resp.json["since"]) == now - timedelta(hours=5)
    assert resp.json["until"].endswith("+00:00") and datetime.fromisoformat(resp.json["until"]) >= now

    new = redeliveries(tx, endpoint)
    by_due = sorted(new, key=lambda row: row.next_attempt_at)
    assert [row.retry_of for row in by_due] == [ids[1], ids[2], ids[0]]  # 3 h, 2 h, 1 h ago
    assert gaps(by_due) == [0.05, 0.05]  # WEBHOOK_RECOVER_PER_SECOND's default, 20 a second
    for row in new:
        original = before[row.retry_of]
        assert (row.event_id, row.event_type, row.status, row.attempt_count) == (
            original.event_id, original.event_type, "PENDING", 0,
        )  # fmt: skip
        assert row.is_test is False and row.endpoint_id == original.endpoint_id
    # the rest as they were: FAILED keeps its retries, the originals stay EXHAUSTED
    after = {row.id: row for row in deliveries(tx, endpoint)}
    assert all(after[delivery_id] == row for delivery_id, row in before.items())

    again = recover(client, org, endpoint, since=resp.json["since"], until=resp.json["until"])
    assert again.status_code == 202 and (again.json["recovered"], again.json["hasMore"]) == (0, False)
    assert len(redeliveries(tx, endpoint)) == 3


def test_a_manually_retried_delivery_is_skipped_and_a_next_call_continues_the_spread(client, org, tx):
    endpoint = create(client, org)
    now = datetime.now(UTC)
    publish(tx, org, count=4)
    ids = [row.id for row in deliveries(tx, endpoint)]
    exhaust(tx, ids[:2], created_at=now - timedelta(hours=1))
    retried = client.simulate_post(f"{BASE}/{endpoint['id']}/deliveries/{ids[0]}/retry", headers=org.admin.headers)
    assert retried.status_code == 202
    first = recover(client, org, endpoint, since=iso(now - timedelta(hours=2)))
    assert first.json["recovered"] == 1  # ids[1]; ids[0] was retried by hand
    exhaust(tx, ids[2:], created_at=now - timedelta(minutes=30))
    second = recover(client, org, endpoint, since=iso(now - timedelta(hours=2)))
    assert second.json["recovered"] == 2
    recovered = [row for row in redeliveries(tx, endpoint) if row.retry_of != ids[0]]
    assert sorted(row.retry_of for row in recovered) == sorted(ids[1:])
    # the second call's deliveries fall due after the first's, at the same pace
    assert gaps(recovered) == [0.05, 0.05]


def test_the_endpoints_rate_limit_sets_the_pace(client, org, tx):
    endpoint = create(client, org)
    set_endpoint(tx, endpoint, rate_limit_per_second=4)
    now = datetime.now(UTC)
    publish(tx, org, count=3)
    exhaust(tx, [row.id for row in deliveries(tx, endpoint)], created_at=now - timedelta(minutes=5))
    assert recover(client, org, endpoint, since=iso(now - timedelta(hours=1))).json["recovered"] == 3
    assert gaps(redeliveries(tx, endpoint)) == [0.25, 0.25]


def test_at_most_1000_a_call_then_has_more(client, org, tx):
    endpoint = create(client, org)
    now = datetime.now(UTC)
    publish(tx, org, count=1001)
    ids = [row.id for row in deliveries(tx, endpoint)]
    exhaust(tx, ids, created_at=now - timedelta(hours=1))
    since = iso(now - timedelta(hours=2))
    first = recover(client, org, endpoint, since=since)
    assert (first.json["recovered"], first.json["hasMore"]) == (1000, True)
    assert {row.retry_of for row in redeliveries(tx, endpoint)} == set(ids[:1000])  # the oldest (same time: id order)
    second = recover(client, org, endpoint, since=since, until=first.json["until"])
    assert (second.json["recovered"], second.json["hasMore"]) == (1, False)
    new = redeliveries(tx, endpoint)
    assert len(new) == 1001 and {row.retry_of for row in new} == set(ids)


def test_oversized_payloads_are_not_recovered(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org, data={"blob": "x" * (intake.MAX_PAYLOAD_BYTES + 1)})  # EXHAUSTED at once, undeliverable
    [row] = deliveries(tx, endpoint)
    assert row.status == "EXHAUSTED"
    resp = recover(client, org, endpoint, since=iso(datetime.now(UTC) - timedelta(hours=1)))
    assert resp.json["recovered"] == 0 and redeliveries(tx, endpoint) == []


def test_a_paused_endpoints_recoveries_are_held(client, org, tx):
    endpoint = create(client, org)
    now = datetime.now(UTC)
    publish(tx, org, count=2)
    exhaust(tx, [row.id for row in deliveries(tx, endpoint)], created_at=now - timedelta(minutes=5))
    assert client.simulate_put(f"{BASE}/{endpoint['id']}", json={"status": "PAUSED"}, headers=org.admin.headers).status_code == 200
    assert recover(client, org, endpoint, since=iso(now - timedelta(hours=1))).json["recovered"] == 2
    new = redeliveries(tx, endpoint)
    assert len(new) == 2 and all(row.next_attempt_at is None and row.status == "PENDING" for row in new)
    client.simulate_put(f"{BASE}/{endpoint['id']}", json={"status": "ACTIVE"}, headers=org.admin.headers)
    assert all(row.next_attempt_at is not None for row in redeliveries(tx, endpoint))  # released on resume


def test_a_disabled_or_revoked_endpoint_is_409_and_nothing_is_made(client, org, tx):
    disabled, revoked = create(client, org), create(client, org)
    now = datetime.now(UTC)
    publish(tx, org)
    for endpoint in (disabled, revoked):
        exhaust(tx, [row.id for row in deliveries(tx, endpoint)], created_at=now - timedelta(minutes=5))
    set_endpoint(tx, disabled, status="DISABLED", disabled_reason="Too many failures.")
    client.simulate_delete(f"{BASE}/{revoked['id']}", headers=org.admin.headers)
    since = iso(now - timedelta(hours=1))
    for endpoint, code in ((disabled, "webhook_config_disabled"), (revoked, "webhook_config_revoked")):
        resp = recover(client, org, endpoint, since=since)
        assert resp.status_code == 409 and resp.json["code"] == code
        assert resp.headers["content-type"] == "application/problem+json"
        assert redeliveries(tx, endpoint) == []
    assert "ACTIVE" in recover(client, org, disabled, since=since).json["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "since"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-11-02T10:00:00"}, "since"),  # no offset
        ({"since": 1700000000}, "since"),
        ({"since": "-31d"}, "since"),  # older than the 30-day history
        ({"since": "-2h", "until": "+1h"}, "until"),  # in the future
        ({"since": "-31d", "until": "-1h"}, "since"),
        ({"since": "-1h", "until": "-2h"}, "since"),  # since after until
        ({"since": "-1h", "until": "-1h"}, "since"),  # an empty window
        ({"since": "-1h", "until": "soon"}, "until"),
    ],
)
def test_a_bad_window_is_400_naming_the_field(client, org, tx, body, field):
    endpoint = create(client, org)
    now = datetime.now(UTC).replace(microsecond=0)
    for name, value in body.items():
        if isinstance(value, str) and value[0] in "+-":
            unit = {"d": timedelta(days=1), "h": timedelta(hours=1)}[value[-1]]
            body[name] = iso(now + int(value[:-1]) * unit)
    resp = recover(client, org, endpoint, **body)
    assert resp.status_code == 400, resp.json
    assert resp.json["code"] == "validation_error"
    assert resp.json["errors"][0]["field"] == field, resp.json


def test_an_unknown_or_another_organizations_endpoint_is_404(client, org, other_org):
    endpoint = create(client, org)
    since = iso(datetime.now(UTC) - timedelta(hours=1))
    assert recover(client, other_org, endpoint, since=since).status_code == 404
    assert recover(client, org, {"id": str(uuid.uuid4())}, since=since).status_code == 404


def test_an_idempotency_key_replays_the_answer_and_recovers_once(client, org, tx):
    endpoint = create(client, org)
    now = datetime.now(UTC)
    publish(tx, org, count=2)
    exhaust(tx, [row.id for row in deliveries(tx, endpoint)], created_at=now - timedelta(minutes=5))
    body = {"since": iso(now - timedelta(hours=1))}
    first = recover(client, org, endpoint, headers={"Idempotency-Key": "recover-1"}, **body)
    retry = recover(client, org, endpoint, headers={"Idempotency-Key": "recover-1"}, **body)
    assert first.status_code == retry.status_code == 202
    assert retry.headers["Idempotent-Replayed"] == "true" and retry.json == first.json
    assert len(redeliveries(tx, endpoint)) == 2
    other = recover(client, org, endpoint, headers={"Idempotency-Key": "recover-1"}, since=iso(now - timedelta(hours=2)))
    assert other.status_code == 422
