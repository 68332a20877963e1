"""The headers of one attempt: Standard Webhooks signing plus the spec's ``X-Service-*`` headers,
and the signed attempt of a claimed delivery (``SignedSender``).

Signed anew on every attempt (a fresh timestamp, and the endpoint's secret as it is now: a rotation
applies from the next attempt on, with no overlap).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache
from uuid import UUID

from standardwebhooks import Webhook

from dps_webhooks.adapters.loopback import LoopbackSender
from dps_webhooks.adapters.sender import Sender
from dps_webhooks.adapters.signing_secrets import SecretSealer
from dps_webhooks.domain.attempt_outcome import AttemptResult
from dps_webhooks.domain.claims import Claimed
from dps_webhooks.domain.request_headers import request_headers
from dps_webhooks.settings import Settings


def delivery_headers(
    *, secret: str, event_id: UUID, delivery_id: UUID, attempt: int, body: str, now: datetime | None = None
) -> dict[str, str]:
    timestamp = now or datetime.now(UTC)
    signature = _signer(secret).sign(msg_id=str(event_id), timestamp=timestamp, data=body)
    return request_headers(
        event_id=event_id,
        delivery_id=delivery_id,
        attempt=attempt,
        timestamp=int(timestamp.timestamp()),
        signature=signature,
    )


@lru_cache(maxsize=1024)
def _signer(secret: str) -> Webhook:
    return Webhook(secret)  # decodes the secret: once per secret, not per attempt


class SignedSender:
    """One attempt of a claimed delivery: its headers signed with the endpoint's secret as it is now,
    sent to the vetted address (``Sender``; plain http:// to loopback receivers only when the
    development setting asks for it). Safe to share between the worker's attempt threads."""

    def __init__(self, settings: Settings):
        sender = LoopbackSender if settings.allow_insecure_loopback else Sender
        self._sender = sender(settings.attempt_timeout_seconds, settings.allowed_networks, settings.receiver_ca_file)
        # Opened once per endpoint and secret (a rotation changes the sealed bytes), not per attempt.
        self._open_secret = lru_cache(maxsize=1024)(SecretSealer(settings.secret_key).open)

    def send(self, claimed: Claimed) -> AttemptResult:
        secret = self._open_secret(claimed.endpoint_id, claimed.secret_sealed)
        headers = delivery_headers(
            secret=secret,
            event_id=claimed.event_id,
            delivery_id=claimed.delivery_id,
            attempt=claimed.attempt,
            body=claimed.body,
        )
        result = self._sender.send(claimed.url, claimed.body.encode(), headers)
        # Kept with the attempt: the delivery view shows the request as it was sent.
        return replace(
            result,
            webhook_timestamp=int(headers["webhook-timestamp"]),
            webhook_signature=headers["webhook-signature"],
        )
