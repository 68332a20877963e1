"""Attempt headers: Standard Webhooks signing that the receivers' library verifies, and ours."""

import uuid
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from dps_webhooks.adapters.signing import delivery_headers
from dps_webhooks.adapters.signing_secrets import new_signing_secret
from dps_webhooks.domain.request_headers import USER_AGENT

BODY = '{"id": "e", "type": "quote.approved", "data": {"total": "1.00"}}'


def headers(secret, **kwargs):
    values = {"event_id": uuid.UUID(int=1), "delivery_id": uuid.UUID(int=2), "attempt": 3, "body": BODY}
    return delivery_headers(secret=secret, **{**values, **kwargs})


def test_the_signature_verifies_with_the_standardwebhooks_package():
    secret = new_signing_secret()
    signed = headers(secret)
    assert Webhook(secret).verify(BODY, signed) == {"id": "e", "type": "quote.approved", "data": {"total": "1.00"}}


def test_the_headers_carry_the_event_delivery_and_attempt():
    signed = headers(new_signing_secret())
    assert signed["webhook-id"] == signed["X-Service-Event-Id"] == str(uuid.UUID(int=1))
    assert signed["X-Service-Delivery-Id"] == str(uuid.UUID(int=2))
    assert signed["X-Service-Attempt"] == "3"
    assert signed["Content-Type"] == "application/json"
    assert signed["User-Agent"] == USER_AGENT
    assert signed["webhook-signature"].startswith("v1,")


def test_another_secret_a_changed_body_or_another_event_id_do_not_verify():
    secret = new_signing_secret()
    signed = headers(secret)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_signing_secret()).verify(BODY, signed)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace("1.00", "9.00"), signed)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, {**signed, "webhook-id": str(uuid.UUID(int=9))})


def test_each_signing_uses_its_own_timestamp():
    secret = new_signing_secret()
    first = headers(secret, now=datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC))
    later = headers(secret, now=datetime(2030, 1, 1, 12, 0, 30, tzinfo=UTC))
    assert int(later["webhook-timestamp"]) - int(first["webhook-timestamp"]) == 30
    assert first["webhook-signature"] != later["webhook-signature"]
