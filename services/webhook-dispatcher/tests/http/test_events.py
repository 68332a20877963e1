"""``GET /events`` and ``GET /events/{id}`` through build_http: the organization's events newest first
with the deliveries' paging, the type and time filters (400 naming a bad one), every role reading them,
another organization's events invisible, and one event answered byte for byte as it was sent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from dps_common.events.envelope import envelope
from dps_common.json import dumps

from dps_webhooks.db.models import WebhookEvent
from dps_webhooks.schemas.event_log import Event, EventBody, EventList
from dps_webhooks.services import intake

from webhook_helpers import accept_event

EVENTS = "/external/v1/events"
EVENT_KEYS = {"id", "type", "occurredAt", "createdAt", "payloadBytes", "payloadKept"}


def publish(tx, org, event_type="quote.approved", *, body=None, received_at=None):
    """An event from the api accepted as the consumer does (``body``: its exact text); its id."""
    body = body or dumps(envelope(event_type, uuid.UUID(org.id), {"quoteId": str(uuid.uuid4())})).decode()
    event = intake.IncomingEvent.from_envelope(body)
    with tx() as session:
        accept_event(session, event)
        if received_at is not None:
            session.execute(update(WebhookEvent).where(WebhookEvent.id == event.id).values(received_at=received_at))
    return str(event.id)


def listed(client, member, **params):
    resp = client.simulate_get(EVENTS, params=params, headers=member.headers)
    assert resp.status_code == 200, resp.json
    EventList.model_validate(resp.json)
    return resp.json


def walk(client, member, **params):
    """Every page of the list with these filters; the ids in order."""
    ids, cursor = [], None
    while True:
        page = listed(client, member, **params, **({"cursor": cursor} if cursor else {}))
        ids += [event["id"] for event in page["events"]]
        if (cursor := page["nextCursor"]) is None:
            return ids


def problem(resp, status, code):
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert resp.json["code"] == code, resp.json
    return resp.json


def test_the_list_is_newest_first_by_receipt_and_pages_to_the_end(client, org, tx):
    now = datetime.now(UTC)
    oldest = publish(tx, org, received_at=now - timedelta(days=3))
    older = publish(tx, org, "product.created", received_at=now - timedelta(days=2))
    same_time = [publish(tx, org, received_at=now - timedelta(hours=1)) for _ in range(3)]
    newest = publish(tx, org, received_at=now)

    page = listed(client, org.admin)
    assert [e["id"] for e in page["events"]] == [newest, *reversed(same_time), older, oldest]  # ties: id, desc
    assert page["nextCursor"] is None
    first = page["events"][0]
    Event.model_validate(first)
    assert set(first) == EVENT_KEYS
    assert first["type"] == "quote.approved" and first["payloadKept"] is True and first["payloadBytes"] > 0
    assert datetime.fromisoformat(first["createdAt"]) == now
    assert walk(client, org.admin, limit=2) == [e["id"] for e in page["events"]]  # pages of 2: the same, once each


def test_every_role_reads_the_events_view_only_included(client, org, tx):
    event_id = publish(tx, org)
    for member in (org.admin, org.user, org.viewer):
        assert [e["id"] for e in listed(client, member)["events"]] == [event_id]
        resp = client.simulate_get(f"{EVENTS}/{event_id}", headers=member.headers)
        assert resp.status_code == 200, resp.text


def test_another_organizations_events_are_neither_listed_nor_readable(client, org, other_org, tx):
    mine, theirs = publish(tx, org), publish(tx, other_org)
    assert [e["id"] for e in listed(client, org.admin)["events"]] == [mine]
    assert [e["id"] for e in listed(client, other_org.viewer)["events"]] == [theirs]
    body = problem(client.simulate_get(f"{EVENTS}/{theirs}", headers=org.admin.headers), 404, "not_found")
    assert body["detail"] == "Event not found."
    problem(client.simulate_get(f"{EVENTS}/{uuid.uuid4()}", headers=org.admin.headers), 404, "not_found")
    problem(client.simulate_get(f"{EVENTS}/not-an-id", headers=org.admin.headers), 404, "not_found")


def test_an_event_is_answered_byte_for_byte_as_it_was_sent(client, org, tx):
    # spacing, key order, escapes and non-ASCII as the publisher wrote them: re-serialising would change them
    body = (
        '{"type": "quote.approved",  "id": "%s", "version": 1, "organizationId": "%s",\n'
        ' "occurredAt": "2026-11-02T09:59:59.512000Z", "data": {"name": "Caf\\u00e9 \u2014 \u00fcber", "total": 1.50}}'
    ) % (uuid.uuid4(), org.id)
    event_id = publish(tx, org, body=body)

    resp = client.simulate_get(f"{EVENTS}/{event_id}", headers=org.viewer.headers)

    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.content == body.encode()
    EventBody.model_validate(resp.json)
    [listed_event] = listed(client, org.viewer)["events"]
    assert listed_event["payloadBytes"] == len(body.encode())


def test_an_event_over_the_payload_limit_is_listed_and_its_body_is_a_clear_409(client, org, tx):
    data = {"blob": "x" * (intake.MAX_PAYLOAD_BYTES + 1)}
    event_id = publish(tx, org, body=dumps(envelope("quote.approved", uuid.UUID(org.id), data)).decode())

    [event] = listed(client, org.admin)["events"]
    assert (event["id"], event["payloadKept"]) == (event_id, False)
    assert event["payloadBytes"] > intake.MAX_PAYLOAD_BYTES
    body = problem(client.simulate_get(f"{EVENTS}/{event_id}", headers=org.admin.headers), 409, "event_payload_not_kept")
    assert "over the 1 MB limit" in body["detail"] and body["eventId"] == event_id


def test_a_test_deliverys_event_is_listed_as_webhook_test(client, org):
    created = client.simulate_post(
        "/external/v1/webhook-configs", json={"url": "https://127.0.0.1:8443/hooks"}, headers=org.admin.headers
    )
    delivery = client.simulate_post(f"/external/v1/webhook-configs/{created.json['id']}/test", headers=org.admin.headers)
    assert delivery.status_code == 202
    [event] = listed(client, org.viewer, type="webhook.test")["events"]
    assert event["id"] == delivery.json["eventId"]
    resp = client.simulate_get(f"{EVENTS}/{event['id']}", headers=org.viewer.headers)
    assert resp.json["type"] == "webhook.test" and resp.json["data"]["webhookConfigId"] == created.json["id"]


def test_the_type_filter_and_the_half_open_time_window(client, org, tx):
    at = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    before = publish(tx, org, received_at=at - timedelta(microseconds=1))
    start = publish(tx, org, received_at=at)
    product = publish(tx, org, "product.created", received_at=at + timedelta(minutes=1))
    end = publish(tx, org, received_at=at + timedelta(hours=1))

    assert walk(client, org.admin, type="product.created") == [product]
    assert walk(client, org.admin, type="quote.approved") == [end, start, before]
    assert walk(client, org.admin, type="approval.requested") == []
    window = {"createdAfter": "2026-11-02T10:00:00Z", "createdBefore": "2026-11-02T11:00:00Z"}
    assert walk(client, org.admin, **window, limit=1) == [product, start]  # from at, inclusive, to an hour later, not
    assert walk(client, org.admin, **window, type="quote.approved") == [start]
    assert walk(client, org.admin, createdAfter="2026-11-02T11:00:00+01:00") == [end, product, start]  # 10:00 UTC
    # an offset's "+" sent unencoded arrives as a space: read as the "+" it was
    assert walk(client, org.admin, createdBefore="2026-11-02T12:00:00 02:00") == [before]


def test_a_cursor_is_bound_to_its_filters(client, org, tx):
    for _ in range(3):
        publish(tx, org)
    cursor = listed(client, org.admin, limit=1, type="quote.approved")["nextCursor"]
    assert cursor
    problem(client.simulate_get(EVENTS, params={"cursor": cursor}, headers=org.admin.headers), 400, "invalid_cursor")
    after = {"createdAfter": "2026-01-01T00:00:00Z"}
    cursor = listed(client, org.admin, limit=1, **after)["nextCursor"]
    problem(client.simulate_get(EVENTS, params={"cursor": cursor, "createdAfter": "2026-01-01T00:00:01Z"},
                                headers=org.admin.headers), 400, "invalid_cursor")
    problem(client.simulate_get(EVENTS, params={"cursor": "forged.cursor"}, headers=org.admin.headers), 400,
            "invalid_cursor")
    # the same moment with another offset is the same filter: its cursor goes on
    same = listed(client, org.admin, limit=1, createdAfter="2026-01-01T01:00:00+01:00", cursor=cursor)
    assert len(same["events"]) == 1


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"type": "quote.aproved"}, "type", "did you mean 'quote.approved'?"),
        ({"type": ""}, "type", "unknown event type"),
        ({"type": "internal.api_key.revoked"}, "type", "unknown event type"),
        ({"createdAfter": "yesterday"}, "createdAfter", "RFC 3339"),
        ({"createdAfter": "2026-11-02T10:00:00"}, "createdAfter", "with its offset"),  # no offset: whose 10:00?
        ({"createdAfter": "2026-11-02"}, "createdAfter", "RFC 3339"),
        ({"createdBefore": "2026-02-30T10:00:00Z"}, "createdBefore", "RFC 3339"),
        ({"createdBefore": "1762077600"}, "createdBefore", "RFC 3339"),
        ({"createdAfter": "2026-11-02T10:00:00Z", "createdBefore": "2026-11-02T10:00:00Z"}, "createdBefore",
         "later than createdAfter"),
    ],
)
def test_a_filter_that_cannot_be_read_is_a_400_naming_it(client, org, params, field, message):
    body = problem(client.simulate_get(EVENTS, params=params, headers=org.viewer.headers), 400, "validation_error")
    assert body["errors"][0]["field"] == field
    assert message in body["errors"][0]["message"]


@pytest.mark.parametrize("limit", ["0", "501", "ten", "-1"])
def test_the_limit_is_the_deliveries_1_to_500(client, org, limit):
    body = problem(client.simulate_get(EVENTS, params={"limit": limit}, headers=org.admin.headers), 400, "invalid_limit")
    assert "between 1 and 500" in body["detail"]


def test_the_default_page_is_50(client, org, tx):
    for _ in range(51):
        publish(tx, org)
    page = listed(client, org.admin)
    assert len(page["events"]) == 50 and page["nextCursor"]
    assert len(listed(client, org.admin, cursor=page["nextCursor"])["events"]) == 1
