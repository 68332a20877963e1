"""The event log on a committed database, as the consumer fills it and retention empties it: events
accepted in batches by the consumer's use case (each batch its own transaction, so its own received
time) listed newest first through build_http, page by page even while new events arrive; the filters
on the database's own times; another organization's events invisible; the body a real receiver got
from the worker, byte for byte, from ``GET /events/{id}``; and retention keeping an event 30 days
whether or not any delivery uses it."""

from __future__ import annotations

import uuid

import falcon.testing
import pytest
from sqlalchemy import select

from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.composition import build_http
from dps_webhooks.db.models import WebhookEvent
from dps_webhooks.services.event_intake import EventIntake
from dps_webhooks.services.intake import IncomingEvent
from dps_webhooks.services.retention import maintain

from webhook_helpers import incoming, running_worker, webhook_database

EVENTS = "/external/v1/events"
QUICK = {"WEBHOOK_RETRY_JITTER": "0", "WEBHOOK_POLL_INTERVAL_SECONDS": "0.05", "WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2"}


@pytest.fixture(scope="module")
def settings_for(make_settings):
    with webhook_database("dps_wh_events") as url:
        yield lambda **env: make_settings(DATABASE_URL=url, **env)


@pytest.fixture(scope="module")
def client(settings_for):
    app = build_http(settings_for())  # its own transactions: it reads what the consumer committed
    yield falcon.testing.TestClient(app)
    app.context.tx.dispose()


@pytest.fixture(scope="module")
def intake(store):
    return EventIntake(store.tx)


@pytest.fixture
def tenant(fake_api):
    """A new organization of the fake api per test: each test sees only its own events."""
    return fake_api.provisioned(f"Events {uuid.uuid4().hex[:8]}")


def accept(intake, org, *types: str) -> list[str]:
    """One batch (one transaction, one received time) of events of these types; their ids."""
    events = [incoming(uuid.UUID(org.id), event_type) for event_type in types]
    intake.accept(events)
    return [str(event.id) for event in events]


def page(client, member, **params):
    resp = client.simulate_get(EVENTS, params=params, headers=member.headers)
    assert resp.status_code == 200, resp.text
    return resp.json


def walk(client, member, **params):
    ids, cursor = [], None
    while True:
        answer = page(client, member, **params, **({"cursor": cursor} if cursor else {}))
        ids += [event["id"] for event in answer["events"]]
        if (cursor := answer["nextCursor"]) is None:
            return ids


def received_at(store, event_id):
    with store.tx.read() as session:
        return session.scalar(select(WebhookEvent.received_at).where(WebhookEvent.id == uuid.UUID(event_id)))


def test_batches_are_listed_newest_first_and_a_walk_sees_each_once_while_events_arrive(client, intake, tenant):
    batches = [accept(intake, tenant, *["quote.approved"] * size) for size in (1, 3, 2, 1, 3)]
    expected = [event_id for batch in reversed(batches) for event_id in sorted(batch, reverse=True)]
    assert walk(client, tenant.viewer) == expected

    first = page(client, tenant.viewer, limit=4)
    newer = accept(intake, tenant, "quote.approved")  # arrives mid-walk: ahead of the cursor, not in this walk
    seen, cursor = [e["id"] for e in first["events"]], first["nextCursor"]
    while cursor:
        answer = page(client, tenant.viewer, limit=4, cursor=cursor)
        seen += [e["id"] for e in answer["events"]]
        cursor = answer["nextCursor"]
    assert seen == expected
    assert walk(client, tenant.viewer)[0] == newer[0]


def test_the_filters_on_the_databases_received_times(client, intake, store, tenant):
    [early] = accept(intake, tenant, "quote.approved")
    middle = accept(intake, tenant, "quote.approved", "product.created")
    [late] = accept(intake, tenant, "product.created")
    start, end = received_at(store, middle[0]), received_at(store, late)
    window = {"createdAfter": start.isoformat(), "createdBefore": end.isoformat()}

    assert walk(client, tenant.admin, **window) == sorted(middle, reverse=True)
    assert walk(client, tenant.admin, **window, type="product.created") == [middle[1]]
    assert walk(client, tenant.admin, type="quote.approved") == [middle[0], early]
    assert walk(client, tenant.admin, createdAfter=end.isoformat()) == [late]
    assert walk(client, tenant.admin, createdBefore=start.isoformat()) == [early]


def test_another_organizations_events_stay_its_own(client, intake, fake_api, tenant):
    other = fake_api.provisioned(f"Other {uuid.uuid4().hex[:8]}")
    mine, theirs = accept(intake, tenant, "quote.approved"), accept(intake, other, "quote.approved")
    assert walk(client, tenant.admin) == mine and walk(client, other.admin) == theirs
    resp = client.simulate_get(f"{EVENTS}/{theirs[0]}", headers=tenant.admin.headers)
    assert resp.status_code == 404 and resp.json["code"] == "not_found"


def test_the_body_is_the_bytes_the_receiver_got(client, intake, store, settings_for, tls_files, tenant):
    with Receiver(tls_files) as receiver:
        endpoint_id, secret = store.endpoint(receiver.url("/in", host="localhost"), organization_id=uuid.UUID(tenant.id))
        receiver.secrets.append(secret)
        data = {"name": "Caf\u00e9 \u2014 \u00fcber", "lines": [{"amount": "1234.50"}], "note": "a\tb\n\"c\""}
        event = IncomingEvent.from_envelope(dumps(envelope("quote.approved", uuid.UUID(tenant.id), data)).decode())
        intake.accept([event])
        with running_worker(settings_for(**QUICK)):
            [request] = receiver.wait_for(1, path="/in")
        assert request.verified

    resp = client.simulate_get(f"{EVENTS}/{event.id}", headers=tenant.viewer.headers)

    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.content == request.body


def test_retention_keeps_an_event_30_days_whether_or_not_a_delivery_uses_it(client, intake, store, tenant):
    kept, purged, newest = (accept(intake, tenant, "quote.approved")[0] for _ in range(3))
    for event_id, days in ((kept, 29), (purged, 31)):
        store.sql("UPDATE webhook_events SET received_at = now() - :d * interval '1 day' WHERE id = :id",
                  d=days, id=event_id)
    assert walk(client, tenant.admin) == [newest, kept, purged]  # no endpoint: no delivery uses any of them

    done = maintain(store.tx, 30)

    assert done.events >= 1
    assert walk(client, tenant.admin) == [newest, kept]
    assert client.simulate_get(f"{EVENTS}/{kept}", headers=tenant.admin.headers).status_code == 200
    assert client.simulate_get(f"{EVENTS}/{purged}", headers=tenant.admin.headers).status_code == 404


def test_an_event_past_retention_stays_while_a_delivery_uses_it(client, store, tenant):
    endpoint_id, _ = store.endpoint("https://hooks.example.com/in", organization_id=uuid.UUID(tenant.id))
    event, _ = store.event_for(endpoint_id)  # a delivery of today uses it
    store.sql("UPDATE webhook_events SET received_at = now() - interval '31 days' WHERE id = :id", id=event.id)

    maintain(store.tx, 30)

    assert walk(client, tenant.admin) == [str(event.id)]  # 31 days old, kept for the delivery of today
