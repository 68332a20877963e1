"""``PUT``, ``DELETE`` and ``rotate-secret`` on ``/webhook-configs/{id}``: the status transitions of spec
section 3 (each allowed and refused one), what they do to waiting deliveries, revocation and rotation."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from dps_common.events.envelope import envelope
from dps_common.json import dumps

from dps_webhooks.adapters.signing_secrets import SecretSealer
from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint
from dps_webhooks.services import intake

from webhook_helpers import accept_event

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"
AUTO_REASON = "Disabled after 20 consecutive failed deliveries."


def create(client, org, **fields):
    resp = client.simulate_post(BASE, json={"url": URL, **fields}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def put(client, org, endpoint, **body):
    return client.simulate_put(f"{BASE}/{endpoint['id']}", json=body, headers=org.admin.headers)


def force(tx, endpoint, **values):
    """Put the endpoint in a state only the worker can reach (auto-disable, failure counts)."""
    with tx() as session:
        session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == uuid.UUID(endpoint["id"])).values(**values))


def auto_disable(tx, endpoint):
    force(tx, endpoint, status="DISABLED", consecutive_failures=20, disabled_reason=AUTO_REASON)


def publish(tx, org, event_type="quote.approved"):
    """An event from the api, as the consumer accepts it: one delivery per subscribed endpoint."""
    body = dumps(envelope(event_type, uuid.UUID(org.id), {"quoteId": str(uuid.uuid4())})).decode()
    with tx() as session:
        accept_event(session, intake.IncomingEvent.from_envelope(body))


def schedule(tx, endpoint):
    """{is_test: [next_attempt_at is set]} of the endpoint's deliveries."""
    with tx() as session:
        rows = session.execute(
            select(WebhookDelivery.is_test, WebhookDelivery.next_attempt_at).where(
                WebhookDelivery.endpoint_id == uuid.UUID(endpoint["id"])
            )
        ).all()
    result: dict[bool, list[bool]] = {False: [], True: []}
    for is_test, next_attempt_at in rows:
        result[is_test].append(next_attempt_at is not None)
    return result


# --- the transition table ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "requested", "expected"),
    [
        ("ACTIVE", "PAUSED", "PAUSED"),
        ("PAUSED", "ACTIVE", "ACTIVE"),
        ("DISABLED", "ACTIVE", "ACTIVE"),
        ("ACTIVE", "ACTIVE", "ACTIVE"),
        ("PAUSED", "PAUSED", "PAUSED"),
        ("DISABLED", "DISABLED", "DISABLED"),
    ],
)
def test_allowed_transitions(client, org, tx, start, requested, expected):
    endpoint = create(client, org)
    if start == "PAUSED":
        assert put(client, org, endpoint, status="PAUSED").status_code == 200
    if start == "DISABLED":
        auto_disable(tx, endpoint)
    resp = put(client, org, endpoint, status=requested)
    assert resp.status_code == 200, resp.json
    assert resp.json["status"] == expected
    assert client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json["status"] == expected


@pytest.mark.parametrize(
    ("start", "requested", "words"),
    [
        ("DISABLED", "PAUSED", "re-enable"),
        ("ACTIVE", "DISABLED", "DELETE"),
        ("PAUSED", "DISABLED", "DELETE"),
    ],
)
def test_refused_transitions_are_409_with_a_clear_message(client, org, tx, start, requested, words):
    endpoint = create(client, org)
    if start == "PAUSED":
        put(client, org, endpoint, status="PAUSED")
    if start == "DISABLED":
        auto_disable(tx, endpoint)
    resp = put(client, org, endpoint, status=requested, description="not applied either")
    assert resp.status_code == 409, resp.json
    assert resp.json["code"] == "invalid_status_transition"
    assert words in resp.json["detail"]
    after = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert after["status"] == start
    assert after["description"] == ""


@pytest.mark.parametrize("status", ["ACTIVE", "PAUSED", "DISABLED", None])
def test_a_revoked_endpoint_cannot_be_changed_or_reactivated(client, org, status):
    endpoint = create(client, org)
    assert client.simulate_delete(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).status_code == 204
    body = {"description": "again"} if status is None else {"status": status}
    resp = put(client, org, endpoint, **body)
    assert resp.status_code == 409
    assert resp.json["code"] == "webhook_config_revoked"
    after = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert (after["status"], after["description"]) == ("DISABLED", "")


def test_reenabling_clears_the_failures_and_the_reason(client, org, tx):
    endpoint = create(client, org)
    auto_disable(tx, endpoint)
    disabled = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert (disabled["status"], disabled["consecutiveFailures"], disabled["disabledReason"]) == ("DISABLED", 20, AUTO_REASON)
    resp = put(client, org, endpoint, status="ACTIVE", url="https://127.0.0.1:9443/fixed")
    assert resp.status_code == 200
    assert (resp.json["status"], resp.json["consecutiveFailures"], resp.json["disabledReason"]) == ("ACTIVE", 0, None)
    assert resp.json["url"] == "https://127.0.0.1:9443/fixed"


@pytest.mark.parametrize("start", ["ACTIVE", "PAUSED"])
def test_setting_active_always_clears_the_failure_count(client, org, tx, start):
    endpoint = create(client, org)
    force(tx, endpoint, status=start, consecutive_failures=7)
    resp = put(client, org, endpoint, status="ACTIVE")
    assert resp.json["consecutiveFailures"] == 0
    force(tx, endpoint, consecutive_failures=3)
    resp = put(client, org, endpoint, description="no status sent")
    assert resp.json["consecutiveFailures"] == 3  # only setting ACTIVE clears it


# --- what transitions do to waiting deliveries ---------------------------------------------------------


def test_pause_holds_waiting_deliveries_but_not_tests_and_resume_releases_them(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    assert client.simulate_post(f"{BASE}/{endpoint['id']}/test", headers=org.admin.headers).status_code == 202
    assert schedule(tx, endpoint) == {False: [True], True: [True]}
    put(client, org, endpoint, status="PAUSED")
    assert schedule(tx, endpoint) == {False: [False], True: [True]}  # test deliveries are still sent
    publish(tx, org)  # arrives while paused: recorded, held
    assert schedule(tx, endpoint) == {False: [False, False], True: [True]}
    put(client, org, endpoint, status="ACTIVE")
    assert schedule(tx, endpoint) == {False: [True, True], True: [True]}


def test_reenabling_releases_what_was_held_but_nothing_dropped_while_disabled_is_backfilled(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    put(client, org, endpoint, status="PAUSED")  # held
    auto_disable(tx, endpoint)
    publish(tx, org)  # occurs while disabled: not recorded for it
    assert schedule(tx, endpoint) == {False: [False], True: []}
    put(client, org, endpoint, status="ACTIVE")
    assert schedule(tx, endpoint) == {False: [True], True: []}


def test_event_type_filter_decides_which_events_are_recorded(client, org, tx):
    quotes = create(client, org, eventTypes=["quote.approved"])
    everything = create(client, org)
    publish(tx, org, "quote.approved")
    publish(tx, org, "product.created")
    assert schedule(tx, quotes) == {False: [True], True: []}
    assert schedule(tx, everything) == {False: [True, True], True: []}
    put(client, org, quotes, eventTypes=[])  # back to every type (not backfilled)
    publish(tx, org, "product.created")
    assert schedule(tx, quotes) == {False: [True, True], True: []}


# --- other fields ------------------------------------------------------------------------------------------


def test_put_changes_only_the_fields_sent_and_bumps_updated_at_only_on_a_change(client, org):
    endpoint = create(client, org, description="first", eventTypes=["quote.created"])
    same = put(client, org, endpoint, description="first", eventTypes=["quote.created"], unknown=1)
    assert same.status_code == 200
    assert same.json["updatedAt"] == endpoint["updatedAt"]
    resp = put(client, org, endpoint, eventTypes=["quote.approved", "quote.approved"])
    assert resp.json["eventTypes"] == ["quote.approved"]
    assert resp.json["description"] == "first" and resp.json["url"] == URL
    assert datetime.fromisoformat(resp.json["updatedAt"]) > datetime.fromisoformat(endpoint["updatedAt"])
    assert "secret" not in resp.json


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": None}, "url"),
        ({"description": None}, "description"),
        ({"eventTypes": None}, "eventTypes"),
        ({"status": None}, "status"),
        ({"status": "REVOKED"}, "status"),
        ({"status": "paused"}, "status"),
        ({"url": "http://127.0.0.1/x"}, "url"),
    ],
)
def test_bad_update_fields_are_a_400_naming_the_field(client, org, body, field):
    endpoint = create(client, org)
    resp = put(client, org, endpoint, **body)
    assert resp.status_code == 400, resp.json
    assert resp.json["errors"][0]["field"] == field


# --- revoke ------------------------------------------------------------------------------------------------


def test_delete_revokes_for_good_holds_everything_and_is_idempotent(client, org, tx):
    endpoint = create(client, org)
    publish(tx, org)
    client.simulate_post(f"{BASE}/{endpoint['id']}/test", headers=org.admin.headers)
    resp = client.simulate_delete(f"{BASE}/{endpoint['id']}", headers=org.admin.headers)
    assert resp.status_code == 204
    assert not resp.content
    revoked = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert revoked["status"] == "DISABLED"
    assert revoked["disabledReason"] == "Revoked."
    assert datetime.fromisoformat(revoked["revokedAt"]) <= datetime.now(UTC)
    assert schedule(tx, endpoint) == {False: [False], True: [False]}  # test deliveries too
    publish(tx, org)
    assert schedule(tx, endpoint) == {False: [False], True: [False]}  # nothing new is recorded
    again = client.simulate_delete(f"{BASE}/{endpoint['id']}", headers=org.admin.headers)
    assert again.status_code == 204
    assert client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json == revoked
    assert client.simulate_delete(f"{BASE}/{uuid.uuid4()}", headers=org.admin.headers).status_code == 404


def test_an_auto_disabled_endpoint_can_be_revoked(client, org, tx):
    endpoint = create(client, org)
    auto_disable(tx, endpoint)
    assert client.simulate_delete(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).status_code == 204
    after = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert after["disabledReason"] == "Revoked." and after["revokedAt"] is not None


# --- rotate ------------------------------------------------------------------------------------------------


def stored_secret(app, tx, endpoint):
    with tx() as session:
        row = session.get_one(WebhookEndpoint, uuid.UUID(endpoint["id"]))
        return SecretSealer(app.context.settings.secret_key).open(row.id, row.secret_sealed)


def test_rotation_returns_a_new_secret_once_and_replaces_the_stored_one(client, app, org, tx):
    endpoint = create(client, org)
    assert stored_secret(app, tx, endpoint) == endpoint["secret"]
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/rotate-secret", headers=org.admin.headers)
    assert resp.status_code == 200
    rotated = resp.json
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != endpoint["secret"]
    assert stored_secret(app, tx, endpoint) == rotated["secret"]  # the next attempt signs with it alone
    assert rotated["secretRotatedAt"] is not None and rotated["id"] == endpoint["id"]
    read = client.simulate_get(f"{BASE}/{endpoint['id']}", headers=org.admin.headers).json
    assert "secret" not in read
    assert read["secretRotatedAt"] == rotated["secretRotatedAt"]


@pytest.mark.parametrize("state", ["PAUSED", "DISABLED"])
def test_rotation_works_on_a_paused_or_disabled_endpoint(client, org, tx, state):
    endpoint = create(client, org)
    force(tx, endpoint, status=state)
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/rotate-secret", headers=org.admin.headers)
    assert resp.status_code == 200
    assert resp.json["status"] == state


def test_a_revoked_endpoint_cannot_be_rotated(client, app, org, tx):
    endpoint = create(client, org)
    client.simulate_delete(f"{BASE}/{endpoint['id']}", headers=org.admin.headers)
    resp = client.simulate_post(f"{BASE}/{endpoint['id']}/rotate-secret", headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "webhook_config_revoked"
    assert stored_secret(app, tx, endpoint) == endpoint["secret"]
