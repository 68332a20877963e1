"""Removal by both paths (DELETE here, uninstall on the platform), and the platform's signed
webhooks: signature tolerance, unknown types, replays. Every change is an outbox event without tokens."""

from __future__ import annotations

import time

import requests
from sqlalchemy import func, select

from dps_billing.db.models import BillingConnection

from billing_helpers import WEBHOOK_SECRET, connect, outbox_events, signed_event


def connection_of(served: str, key: str) -> requests.Response:
    return requests.get(f"{served}/external/v1/billing-connection", headers={"x-api-key": key}, timeout=10)


def post_event(served: str, body: bytes, signature: str | None) -> requests.Response:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["Stripe-Signature"] = signature
    return requests.post(f"{served}/external/v1/billing-platform/webhooks", data=body, headers=headers, timeout=10)


def test_delete_deauthorizes_on_the_platform_and_deletes_the_connection(served, fake_api, stand_in, committed_tx):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    account = connection_of(served, org.admin.key).json()["accountId"]
    resp = requests.delete(f"{served}/external/v1/billing-connection", headers={"x-api-key": org.admin.key},
                           timeout=10)
    assert resp.status_code == 204
    assert connection_of(served, org.admin.key).status_code == 404
    assert account not in stand_in.installed_accounts()
    deauthorize = stand_in.requests(path="/v1/oauth/deauthorize")[-1]
    assert deauthorize.form == {"client_id": "ca_billing_connector_tests", "stripe_user_id": account}
    with committed_tx.read() as session:
        assert session.scalar(select(func.count()).select_from(BillingConnection)
                              .where(BillingConnection.organization_id == org.id)) == 0
        types = [event["type"] for event in outbox_events(session, org.id)]
        removed = outbox_events(session, org.id, "billing.connection.removed")[0]["data"]
    assert types == ["billing.connection.connected", "billing.connection.removed"]
    assert removed["status"] == "removed" and removed["removedBy"] == "service" and removed["accountId"] == account
    assert not any("token" in key.lower() for key in removed)
    again = requests.delete(f"{served}/external/v1/billing-connection", headers={"x-api-key": org.admin.key},
                            timeout=10)
    assert again.status_code == 404 and again.json()["code"] == "billing_not_connected"


def test_uninstall_on_the_platform_removes_the_connection(served, fake_api, stand_in, committed_tx):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    account = connection_of(served, org.admin.key).json()["accountId"]
    stand_in.uninstall(account)
    deliveries = stand_in.wait_for_webhooks()
    assert any(d.event_type == "account.application.deauthorized" and d.status == 200 for d in deliveries
               if d.account == account)
    assert connection_of(served, org.admin.key).status_code == 404
    with committed_tx.read() as session:
        removed = outbox_events(session, org.id, "billing.connection.removed")
    assert [event["data"]["removedBy"] for event in removed] == ["platform"]


def test_a_bad_missing_or_stale_signature_is_400_and_changes_nothing(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    account = connection_of(served, org.admin.key).json()["accountId"]
    body, _ = signed_event(WEBHOOK_SECRET, "account.application.deauthorized", account)
    _, wrong = signed_event("whsec_someone_else", "account.application.deauthorized", account)
    stale_body, stale = signed_event(WEBHOOK_SECRET, "account.application.deauthorized", account,
                                     timestamp=int(time.time()) - 301)
    for payload, signature in ((body, wrong), (body, None), (stale_body, stale), (body + b" ", wrong)):
        resp = post_event(served, payload, signature)
        assert resp.status_code == 400
        assert resp.json()["code"] == "invalid_signature"
    assert connection_of(served, org.admin.key).status_code == 200
    recent_body, recent = signed_event(WEBHOOK_SECRET, "account.application.authorized", account,
                                       timestamp=int(time.time()) - 290)
    assert post_event(served, recent_body, recent).status_code == 200  # inside the 300 s tolerance


def test_a_signature_dated_beyond_the_tolerance_in_the_future_is_refused_like_a_stale_one(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    account = connection_of(served, org.admin.key).json()["accountId"]
    future_body, future = signed_event(WEBHOOK_SECRET, "account.application.deauthorized", account,
                                       timestamp=int(time.time()) + 3600)
    resp = post_event(served, future_body, future)
    assert resp.status_code == 400 and resp.json()["code"] == "invalid_signature"
    assert connection_of(served, org.admin.key).status_code == 200
    near_body, near = signed_event(WEBHOOK_SECRET, "account.application.authorized", account,
                                   timestamp=int(time.time()) + 200)
    assert post_event(served, near_body, near).status_code == 200  # a clock a little ahead: inside the tolerance


def test_unknown_types_are_ignored_and_a_replayed_event_changes_nothing(served, fake_api, stand_in, committed_tx):
    body, signature = signed_event(WEBHOOK_SECRET, "customer.created", "acct_nobody")
    resp = post_event(served, body, signature)
    assert resp.status_code == 200 and resp.json() == {"received": True, "processed": False}

    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    account = connection_of(served, org.admin.key).json()["accountId"]
    body, signature = signed_event(WEBHOOK_SECRET, "account.application.deauthorized", account)
    assert post_event(served, body, signature).json() == {"received": True, "processed": True}
    assert connection_of(served, org.admin.key).status_code == 404
    connect(served, org.admin.key, stand_in.install(account))  # installed again in the same account
    replay = post_event(served, body, signature)
    assert replay.status_code == 200 and replay.json() == {"received": True, "processed": False}
    assert connection_of(served, org.admin.key).json()["accountId"] == account
