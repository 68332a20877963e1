"""The billing platform's signed webhooks (``POST /billing-platform/webhooks``).

The signature is checked by the ``stripe`` package's own verifier (``Stripe-Signature``, HMAC-SHA256
with the ``whsec_`` secret, 300 s tolerance, into the past and, checked here, the future): a bad,
stale or future-dated one is a 400 and changes nothing. An
event id already processed changes nothing (its row is inserted first, in the same transaction).

- ``account.application.deauthorized``: the app was removed from the account on the platform; every
  connection to that account (in the event's mode) is deleted, tokens with it, with a
  ``billing.connection.removed`` event each.
- ``account.application.authorized``: the app was installed. The tokens come only through the
  authorize flow's callback (which knows the organization), so this changes no connection; it is
  recorded and logged.
- Any other type: 200, ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

import stripe
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert

from dps_common.db import Transactions
from dps_common.errors import BadRequest

from dps_billing.db.models import BillingConnection, PlatformEvent
from dps_billing.services.connection_events import record_removed
from dps_billing.services.ports import Outbox

log = logging.getLogger("dps.billing.platform_events")
AUTHORIZED = "account.application.authorized"
DEAUTHORIZED = "account.application.deauthorized"
HANDLED = frozenset({AUTHORIZED, DEAUTHORIZED})
TOLERANCE_SECONDS = 300


def signed_at(signature: str) -> int | None:
    """The ``t=`` of a ``Stripe-Signature`` header (None when absent or not a number)."""
    for part in signature.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def verify(payload: bytes, signature: str | None, secret: str, now: float) -> dict[str, Any]:
    """The verified event, as plain data, or a 400. Signed more than the tolerance in the future is
    refused like too old (the package checks only the past): a clock that far ahead, or a signature
    made to outlive the tolerance, is not a fresh event."""
    if not signature:
        raise BadRequest("The Stripe-Signature header is missing.", code="invalid_signature")
    stamp = signed_at(signature)
    if stamp is not None and stamp > now + TOLERANCE_SECONDS:
        raise BadRequest("The Stripe-Signature header does not match the body, or is too old or too far in the "
                         "future.", code="invalid_signature")
    try:
        event: dict[str, Any] = stripe.Webhook.construct_event(
            payload, signature, secret, tolerance=TOLERANCE_SECONDS
        ).to_dict()
    except stripe.SignatureVerificationError:
        raise BadRequest("The Stripe-Signature header does not match the body, or is too old or too far in the "
                         "future.",
                         code="invalid_signature") from None
    except ValueError:
        raise BadRequest("The body is not a platform event.", code="invalid_event") from None
    return event


class PlatformEvents:
    def __init__(self, tx: Transactions, secret: str, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._secret = secret
        self._now = now
        self._outbox = outbox

    def receive(self, payload: bytes, signature: str | None) -> bool:
        """Whether the event was processed now (False: a type ignored, or an event id seen before)."""
        event = verify(payload, signature, self._secret, self._now().timestamp())
        event_id, event_type = str(event.get("id") or ""), str(event.get("type") or "")
        account_id = event.get("account")
        if not event_id:
            raise BadRequest("The event has no id.", code="invalid_event")
        if event_type not in HANDLED:
            log.info("platform event ignored", extra={"eventId": event_id, "eventType": event_type})
            return False
        now = self._now()
        with self._tx() as session:
            first = session.execute(
                insert(PlatformEvent)
                .values(id=event_id, event_type=event_type, account_id=account_id, received_at=now)
                .on_conflict_do_nothing(index_elements=["id"])
                .returning(PlatformEvent.id)
            ).first()
            if first is None:
                log.info("platform event replayed", extra={"eventId": event_id})
                return False
            removed = 0
            if event_type == DEAUTHORIZED and account_id:
                stmt = select(BillingConnection).where(
                    BillingConnection.account_id == str(account_id),
                    BillingConnection.livemode == bool(event.get("livemode")),
                ).with_for_update()
                for connection in session.scalars(stmt).all():
                    record_removed(self._outbox, session, connection, "platform", now)
                    session.delete(connection)
                    removed += 1
        log.info("platform event processed",
                 extra={"eventId": event_id, "eventType": event_type, "connectionsRemoved": removed})
        return True
