"""The platform's signed webhooks: authorized on install, deauthorized on uninstall or deauthorize."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
import stripe

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import CLIENT_ID, SECRET_KEY, WEBHOOK_SECRET, Api, Receiver, connect, error_of


def _events(receiver: Receiver) -> list[Any]:
    return [stripe.Webhook.construct_event(body, headers["Stripe-Signature"], WEBHOOK_SECRET)
            for headers, body in receiver.received]


def test_install_sends_a_signed_authorized_event(stand_in: BillingStandIn, receiver: Receiver) -> None:
    account = connect(stand_in)["stripe_user_id"]
    [delivery] = stand_in.wait_for_webhooks()
    assert delivery.status == 200 and delivery.event_type == "account.application.authorized"
    [event] = _events(receiver)
    assert event.id.startswith("evt_") and event.object == "event"
    assert event.type == "account.application.authorized" and event.account == account
    assert event.data.object.id == CLIENT_ID and event.data.object.object == "application"
    assert event.livemode is False and isinstance(event.created, int)
    headers, body = receiver.received[0]
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["id"] == delivery.event_id == event.id


def test_a_wrong_secret_does_not_verify(stand_in: BillingStandIn, receiver: Receiver) -> None:
    stand_in.install()
    stand_in.wait_for_webhooks()
    headers, body = receiver.received[0]
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(body, headers["Stripe-Signature"], "whsec_other")
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(body + b" ", headers["Stripe-Signature"], WEBHOOK_SECRET)


def test_uninstall_revokes_tokens_and_sends_deauthorized(stand_in: BillingStandIn, receiver: Receiver) -> None:
    grant = connect(stand_in)
    stand_in.uninstall(grant["stripe_user_id"])
    deliveries = stand_in.wait_for_webhooks()
    assert [d.event_type for d in deliveries] == ["account.application.authorized",
                                                  "account.application.deauthorized"]
    assert _events(receiver)[1].account == grant["stripe_user_id"]
    assert error_of(Api(stand_in.api_url, grant["access_token"]).get("/v1/products"), 401)
    assert stand_in.installed_accounts() == []
    with pytest.raises(ValueError):
        stand_in.uninstall(grant["stripe_user_id"])


def test_deauthorize_by_the_app_sends_deauthorized_too(stand_in: BillingStandIn, receiver: Receiver) -> None:
    account = connect(stand_in)["stripe_user_id"]
    data = {"client_id": CLIENT_ID, "stripe_user_id": account}
    requests.post(stand_in.api_url + "/v1/oauth/deauthorize", data=data, auth=(SECRET_KEY, ""), timeout=10)
    assert stand_in.wait_for_webhooks()[-1].event_type == "account.application.deauthorized"
    assert _events(receiver)[-1].account == account


def test_failed_deliveries_are_recorded_and_can_be_sent_again(stand_in: BillingStandIn, receiver: Receiver) -> None:
    receiver.status = 500
    stand_in.install()
    [failed] = stand_in.wait_for_webhooks()
    assert failed.status == 500
    receiver.status = 200
    stand_in.redeliver(failed.event_id)
    retried = stand_in.wait_for_webhooks()[-1]
    assert retried.status == 200 and retried.event_id == failed.event_id
    assert len(receiver.received) == 2


def test_without_a_url_events_are_kept_undelivered(stand_in: BillingStandIn, receiver: Receiver) -> None:
    stand_in.webhook_url = None
    stand_in.install()
    [delivery] = stand_in.wait_for_webhooks()
    assert delivery.status is None and delivery.error and receiver.received == []
    assert stand_in.webhook_events()[0]["type"] == "account.application.authorized"


def test_an_unreachable_receiver_is_recorded(stand_in: BillingStandIn) -> None:
    stand_in.webhook_url = "http://127.0.0.1:9/unreachable"
    stand_in.install()
    [delivery] = stand_in.wait_for_webhooks()
    assert delivery.status is None and delivery.error is not None and "Connection" in delivery.error
