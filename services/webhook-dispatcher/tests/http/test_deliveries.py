"""``/webhook-configs/{id}/test`` and ``/webhook-configs/{id}/deliveries/**`` through build_http: test
deliveries, the list newest first with its status filter and paging, one delivery with its attempts,
and manual retries (same event, new delivery)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import text, update

from dps_common.events.envelope import envelope
from dps_common.ids import new_id
from dps_common.json import dumps, loads

from dps_webhooks.db import partitions
from dps_webhooks.db.models import DeliveryAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from dps_webhooks.schemas.deliveries import Delivery, DeliveryDetail, DeliveryList
from dps_webhooks.services import intake

from webhook_helpers import accept_event

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"
DELIVERY_KEYS = {
    "id", "webhookConfigId", "eventId", "eventType", "status", "attemptCount", "isTest", "retryOf",
    "createdAt", "completedAt", "lastResponseStatus", "lastResponseExcerpt", "lastErrorMessage",
    "lastDurationMs", "lastAttemptedAt", "nextAttemptAt",
}  # fmt: skip


def create(client, org, **fields):
    resp = client.simulate_post(BASE, json={"url": URL, **fields}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def publish(tx, org, event_type="quote.approved", data=None):
    """An event from the api, accepted as the consumer does; returns its id."""
    body = dumps(envelope(event_type, uuid.UUID(org.id), data or {"quoteId": str(uuid.uuid4())})).decode()
    event = intake.IncomingEvent.from_envelope(body)
    with tx() as session:
        accept_event(session, event)
    return str(event.id)


def deliveries_of(client, org, endpoint, **params):
    resp = client.simulate_get(f"{BASE}/{endpoint['id']}/deliveries", params=params, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    DeliveryList.model_validate(resp.json)
    return resp.json


def set_delivery(tx, delivery_id, **values):
    with tx() as session:
        session.execute(update(WebhookDelivery).where(WebhookDelivery.id == uuid.UUID(delivery_id)).values(**values))


def set_endpoint(tx, endpoint, **values):
    with tx() as session:
        session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == uuid.UUID(endpoint["id"])).values(**values))


def is_due(record):
    return record["nextAttemptAt"] is not None and datetime.fromisoformat(record["nextAttemptAt"]) <= datetime.now(UTC)


# --- test deliveries -------------------------------------------------------------------------------------


def test_a_test_delivery_is_a_webhook_test_event_due_now(client, org, tx):
    endpoint = create(client, org, eventTypes=["quote.approved"])  # test deliveries ignore the filter
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/test", headers=org.admin.headers)
    assert resp.status_code == 202, resp.json
    delivery = resp.json
    Delivery.model_validate(delivery)
    assert set(delivery) == DELIVERY_KEYS
    assert delivery["webhookConfigId"] == endpoint["id"]
    assert (delivery["eventType"], delivery["status"], delivery["isTest"]) == ("webhook.test", "PENDING", True)
    assert (delivery["attemptCount"], delivery["retryOf"], delivery["completedAt"]) == (0, None, None)
    assert is_due(delivery)
    with tx() as session:
        body = loads(session.get_one(WebhookEvent, uuid.UUID(delivery["eventId"])).body)
    assert body["type"] == "webhook.test" and body["id"] == delivery["eventId"]
    assert body["organizationId"] == org.id
    assert body["data"]["webhookConfigId"] == endpoint["id"] and body["data"]["message"]
    assert body["occurredAt"].endswith("Z")
    listed = deliveries_of(client, org, endpoint)["deliveries"]
    assert [d["id"] for d in listed] == [delivery["id"]]


def test_a_test_delivery_to_a_paused_endpoint_is_created_and_due(client, org):
    endpoint = create(client, org)
    client.simulate_put(f"{BASE}/{endpoint['id']}", json={"status": "PAUSED"}, headers=org.admin.headers)
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/test", headers=org.admin.headers)
    assert resp.status_code == 202
    assert is_due(resp.json)


def test_no_test_delivery_to_a_disabled_or_revoked_endpoint(client, org, tx):
    disabled = create(client, org)
    set_endpoint(tx, disabled, status="DISABLED", disabled_reason="Too many failures.")
    resp = client.simulate_post(f"{BASE}/{disabled['id']}/test", headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "webhook_config_disabled"
    revoked = create(client, org)
    client.simulate_delete(f"{BASE}/{revoked['id']}", headers=org.admin.headers)
    resp = client.simulate_post(f"{BASE}/{revoked['id']}/test", headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "webhook_config_revoked"
    assert deliveries_of(client, org, disabled)["deliveries"] == []
    assert deliveries_of(client, org, revoked)["deliveries"] == []


# --- the list ----------------------------------------------------------------------------------------------


def test_deliveries_are_listed_newest_first_and_paged_to_a_null_cursor(client, org, tx):
    endpoint = create(client, org)
    events = [publish(tx, org) for _ in range(5)]
    first = deliveries_of(client, org, endpoint)
    assert [d["eventId"] for d in first["deliveries"]] == events[::-1]
    assert first["nextCursor"] is None
    seen, cursor, pages = [], None, 0
    while True:
        page = deliveries_of(client, org, endpoint, limit=2, **({"cursor": cursor} if cursor else {}))
        assert len(page["deliveries"]) <= 2
        seen += page["deliveries"]
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == first["deliveries"] and pages == 3
    assert all(set(d) == DELIVERY_KEYS and not d["isTest"] for d in seen)


def test_the_list_pages_across_the_days_partitions_and_each_delivery_is_found_in_its_own(client, org, tx):
    endpoint = create(client, org)
    event_id = uuid.UUID(publish(tx, org))  # today's delivery
    now = datetime.now(UTC)
    days_ago = [2, 1, -1]  # two earlier days and tomorrow (a receiver's clock ahead): each its own partition
    with tx() as session:
        connection = session.connection()
        partitions.ensure_days(connection, [(now - timedelta(days=n)).date() for n in days_ago])
        for n in days_ago:
            at = now - timedelta(days=n)
            delivery_id = uuid.UUID(int=(int(at.timestamp() * 1000) << 80) | (new_id().int & ((1 << 80) - 1)))
            session.add(
                WebhookDelivery(
                    id=delivery_id, organization_id=uuid.UUID(org.id), endpoint_id=uuid.UUID(endpoint["id"]),
                    event_id=event_id, event_type="quote.approved", status="FAILED", attempt_count=1,
                )
            )  # fmt: skip
            session.flush()
            session.add(DeliveryAttempt(delivery_id=delivery_id, attempt=1, attempted_at=at, duration_ms=n + 10))
        homes = connection.execute(
            text("SELECT DISTINCT tableoid::regclass::text FROM webhook_deliveries WHERE endpoint_id = :e"),
            {"e": endpoint["id"]},
        ).scalars()
        assert len(set(homes)) == 4
    seen, cursor = [], None
    while True:
        page = deliveries_of(client, org, endpoint, limit=1, **({"cursor": cursor} if cursor else {}))
        seen += page["deliveries"]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    ids = [d["id"] for d in seen]
    assert len(ids) == 4 and ids == sorted(ids, reverse=True)  # newest first, across the days
    for listed in seen:
        resp = client.simulate_get(f"{BASE}/{endpoint['id']}/deliveries/{listed['id']}", headers=org.admin.headers)
        assert resp.status_code == 200
        assert len(resp.json["attempts"]) == (0 if listed["status"] == "PENDING" else 1)


def test_the_status_filter_and_its_cursor(client, org, tx):
    endpoint = create(client, org)
    for _ in range(4):
        publish(tx, org)
    ids = [d["id"] for d in deliveries_of(client, org, endpoint)["deliveries"]]
    set_delivery(tx, ids[0], status="SUCCESS", next_attempt_at=None, attempt_count=1)
    set_delivery(tx, ids[1], status="FAILED", attempt_count=1)
    set_delivery(tx, ids[2], status="EXHAUSTED", next_attempt_at=None, attempt_count=8)
    expected = {"SUCCESS": [ids[0]], "FAILED": [ids[1]], "EXHAUSTED": [ids[2]], "PENDING": [ids[3]]}
    for status, wanted in expected.items():
        assert [d["id"] for d in deliveries_of(client, org, endpoint, status=status)["deliveries"]] == wanted
    for _ in range(2):
        publish(tx, org)
    pending = deliveries_of(client, org, endpoint, status="PENDING", limit=1)
    assert pending["nextCursor"]
    url = f"{BASE}/{endpoint['id']}/deliveries"
    other_filter = client.simulate_get(
        url, params={"status": "FAILED", "cursor": pending["nextCursor"]}, headers=org.admin.headers
    )
    assert other_filter.status_code == 400  # a cursor is bound to its filter
    assert other_filter.json["code"] == "invalid_cursor"
    for bad in ("pending", "DELIVERED", ""):
        resp = client.simulate_get(url, query_string=f"status={bad}", headers=org.admin.headers)
        assert resp.status_code == 400, bad
        assert resp.json["errors"][0]["field"] == "status"


def test_deliveries_limits_and_foreign_cursors(client, org, tx):
    endpoint, other = create(client, org), create(client, org)
    for _ in range(3):
        publish(tx, org)
    url = f"{BASE}/{endpoint['id']}/deliveries"
    for limit in ("0", "501", "x", "１０", "١٠", "¹⁰"):  # ASCII digits only
        resp = client.simulate_get(url, query_string=f"limit={limit}", headers=org.admin.headers)
        assert resp.status_code == 400, limit
    assert client.simulate_get(url, params={"limit": 500}, headers=org.admin.headers).status_code == 200
    cursor = deliveries_of(client, org, endpoint, limit=1)["nextCursor"]
    resp = client.simulate_get(f"{BASE}/{other['id']}/deliveries", params={"cursor": cursor}, headers=org.admin.headers)
    assert resp.status_code == 400  # issued for another endpoint's list
    assert resp.json["code"] == "invalid_cursor"


def test_the_default_page_is_50(client, org, tx):
    endpoint = create(client, org)
    for _ in range(51):
        publish(tx, org)
    page = deliveries_of(client, org, endpoint)
    assert len(page["deliveries"]) == 50 and page["nextCursor"]


def test_another_organizations_deliveries_are_404(client, org, other_org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    delivery = deliveries_of(client, org, endpoint)["deliveries"][0]
    for path in (
        f"{BASE}/{endpoint['id']}/deliveries",
        f"{BASE}/{endpoint['id']}/deliveries/{delivery['id']}",
    ):
        assert client.simulate_get(path, headers=other_org.admin.headers).status_code == 404, path
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/deliveries/{delivery['id']}/retry", headers=other_org.admin.headers)
    assert resp.status_code == 404
    assert len(deliveries_of(client, org, endpoint)["deliveries"]) == 1


# --- one delivery with its attempts ------------------------------------------------------------------------


def test_a_delivery_with_its_attempts_in_order(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    delivery = deliveries_of(client, org, endpoint)["deliveries"][0]
    start = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    # attempt 1 recorded before attempts kept their signing; attempt 2 as the worker records it now
    signed = {1: (None, None), 2: (1767614460, "v1,c2lnbmF0dXJlLW9mLWF0dGVtcHQtdHdvLWFzLXNlbnQ=")}
    with tx() as session:
        for attempt, status, error in ((2, None, "Connection reset."), (1, 500, None)):  # stored out of order
            session.add(
                DeliveryAttempt(
                    delivery_id=uuid.UUID(delivery["id"]),
                    attempt=attempt,
                    attempted_at=start + timedelta(seconds=30 * attempt),
                    response_status=status,
                    response_excerpt="oops" if status else None,
                    error_message=error,
                    duration_ms=120 * attempt,
                    webhook_timestamp=signed[attempt][0],
                    webhook_signature=signed[attempt][1],
                )
            )
        sent_body = session.get_one(WebhookEvent, uuid.UUID(delivery["eventId"])).body
    set_delivery(
        tx,
        delivery["id"],
        status="FAILED",
        attempt_count=2,
        last_response_status=None,
        last_response_excerpt=None,
        last_error_message="Connection reset.",
        last_duration_ms=240,
        last_attempted_at=start + timedelta(seconds=60),
        next_attempt_at=start + timedelta(seconds=150),
    )
    resp = client.simulate_get(f"{BASE}/{endpoint['id']}/deliveries/{delivery['id']}", headers=org.admin.headers)
    assert resp.status_code == 200
    detail = resp.json
    DeliveryDetail.model_validate(detail)
    assert set(detail) == DELIVERY_KEYS | {"attempts", "request"}
    assert detail["request"] == {"method": "POST", "url": URL, "body": sent_body}
    assert (detail["status"], detail["attemptCount"], detail["lastErrorMessage"]) == ("FAILED", 2, "Connection reset.")
    assert detail["lastDurationMs"] == 240 and detail["lastResponseStatus"] is None
    assert datetime.fromisoformat(detail["lastAttemptedAt"]) == start + timedelta(seconds=60)
    assert datetime.fromisoformat(detail["nextAttemptAt"]) == start + timedelta(seconds=150)
    assert [a["attempt"] for a in detail["attempts"]] == [1, 2]
    first, second = detail["attempts"]
    assert (first["responseStatus"], first["responseExcerpt"], first["errorMessage"], first["durationMs"]) == (500, "oops", None, 120)
    assert (second["responseStatus"], second["errorMessage"]) == (None, "Connection reset.")
    assert datetime.fromisoformat(first["attemptedAt"]) == start + timedelta(seconds=30)
    assert first["requestHeaders"] is None
    assert second["requestHeaders"] == {
        "Content-Type": "application/json",
        "User-Agent": "DealPricingService-Webhooks/1.0",
        "webhook-id": delivery["eventId"],
        "webhook-timestamp": "1767614460",
        "webhook-signature": "v1,c2lnbmF0dXJlLW9mLWF0dGVtcHQtdHdvLWFzLXNlbnQ=",
        "X-Service-Event-Id": delivery["eventId"],
        "X-Service-Delivery-Id": delivery["id"],
        "X-Service-Attempt": "2",
    }
    listed = deliveries_of(client, org, endpoint)["deliveries"][0]
    assert listed == {k: v for k, v in detail.items() if k not in ("attempts", "request")}


def test_the_request_shows_the_endpoint_url_now_and_no_body_for_an_oversized_payload(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org, data={"blob": "x" * (intake.MAX_PAYLOAD_BYTES + 1)})
    delivery = deliveries_of(client, org, endpoint)["deliveries"][0]
    assert delivery["status"] == "EXHAUSTED"
    moved = "https://127.0.0.1:8443/moved"
    assert client.simulate_put(f"{BASE}/{endpoint['id']}", json={"url": moved}, headers=org.admin.headers).status_code == 200
    detail = client.simulate_get(f"{BASE}/{endpoint['id']}/deliveries/{delivery['id']}", headers=org.admin.headers).json
    assert detail["request"] == {"method": "POST", "url": moved, "body": None}
    assert detail["attempts"] == []


def test_a_delivery_of_another_endpoint_or_unknown_is_404(client, org, tx):
    endpoint, other = create(client, org), create(client, org)
    publish(tx, org)
    delivery = deliveries_of(client, org, endpoint)["deliveries"][0]
    for path in (
        f"{BASE}/{other['id']}/deliveries/{delivery['id']}",
        f"{BASE}/{endpoint['id']}/deliveries/{uuid.uuid4()}",
        f"{BASE}/{endpoint['id']}/deliveries/nope",
    ):
        resp = client.simulate_get(path, headers=org.admin.headers)
        assert resp.status_code == 404, path
        assert resp.json["code"] == "not_found"


# --- manual retry ------------------------------------------------------------------------------------------


def test_retry_is_a_new_delivery_of_the_same_event_due_now(client, org, tx):
    endpoint = create(client, org)
    event_id = publish(tx, org)
    original = deliveries_of(client, org, endpoint)["deliveries"][0]
    set_delivery(tx, original["id"], status="EXHAUSTED", next_attempt_at=None, attempt_count=8)
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/deliveries/{original['id']}/retry", headers=org.admin.headers)
    assert resp.status_code == 202, resp.json
    retry = resp.json
    Delivery.model_validate(retry)
    assert retry["id"] != original["id"]
    assert (retry["eventId"], retry["retryOf"], retry["eventType"]) == (event_id, original["id"], "quote.approved")
    assert (retry["status"], retry["attemptCount"], retry["isTest"]) == ("PENDING", 0, False)
    assert is_due(retry)
    listed = deliveries_of(client, org, endpoint)["deliveries"]
    assert [d["id"] for d in listed] == [retry["id"], original["id"]]  # newest first
    assert listed[1]["status"] == "EXHAUSTED"  # the original is left as it was


def test_retry_on_a_paused_endpoint_is_held_unless_it_retries_a_test_delivery(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    original = deliveries_of(client, org, endpoint)["deliveries"][0]
    test = client.simulate_post(f"{BASE}/{endpoint['id']}/test", headers=org.admin.headers).json
    client.simulate_put(f"{BASE}/{endpoint['id']}", json={"status": "PAUSED"}, headers=org.admin.headers)
    held = client.simulate_post(f"{BASE}/{endpoint['id']}/deliveries/{original['id']}/retry", headers=org.admin.headers)
    assert held.status_code == 202
    assert held.json["nextAttemptAt"] is None and held.json["status"] == "PENDING"
    test_retry = client.simulate_post(f"{BASE}/{endpoint['id']}/deliveries/{test['id']}/retry", headers=org.admin.headers)
    assert test_retry.status_code == 202
    assert test_retry.json["isTest"] is True and is_due(test_retry.json)
    client.simulate_put(f"{BASE}/{endpoint['id']}", json={"status": "ACTIVE"}, headers=org.admin.headers)
    released = client.simulate_get(f"{BASE}/{endpoint['id']}/deliveries/{held.json['id']}", headers=org.admin.headers)
    assert is_due(released.json)


def test_no_retry_to_a_disabled_or_revoked_endpoint(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    original = deliveries_of(client, org, endpoint)["deliveries"][0]
    retry_url = f"{BASE}/{endpoint['id']}/deliveries/{original['id']}/retry"
    set_endpoint(tx, endpoint, status="DISABLED", disabled_reason="Too many failures.")
    resp = client.simulate_post(retry_url, headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "webhook_config_disabled"
    client.simulate_delete(f"{BASE}/{endpoint['id']}", headers=org.admin.headers)
    resp = client.simulate_post(retry_url, headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "webhook_config_revoked"
    assert len(deliveries_of(client, org, endpoint)["deliveries"]) == 1


def test_retrying_an_oversized_event_is_exhausted_again_without_a_send(client, org, tx):
    endpoint = create(client, org)
    event_id = publish(tx, org, data={"blob": "x" * (intake.MAX_PAYLOAD_BYTES + 1)})
    original = deliveries_of(client, org, endpoint)["deliveries"][0]
    assert original["status"] == "EXHAUSTED" and original["eventId"] == event_id
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/deliveries/{original['id']}/retry", headers=org.admin.headers)
    assert resp.status_code == 202
    retry = resp.json
    assert (retry["status"], retry["eventId"], retry["retryOf"]) == ("EXHAUSTED", event_id, original["id"])
    assert retry["nextAttemptAt"] is None and retry["completedAt"] is not None
    assert "1 MB" in retry["lastErrorMessage"]
    assert retry["attemptCount"] == 0
