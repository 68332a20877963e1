"""Deliveries of an endpoint (``/webhook-configs/{id}/deliveries``): the list newest first, one with
its attempts and the request they sent, and the two deliveries a caller makes: a test delivery and a manual retry.

A manual retry is a NEW delivery of the same event (same ``eventId``, so receivers deduplicate it;
a new ``id``; ``retryOf`` naming the delivery retried), due now. Both kinds go through
``intake.add_delivery``, so an event whose payload was over 1 MB (stored without a body) gives an
``EXHAUSTED`` delivery again rather than a send.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import not_found
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_webhooks.db.models import DeliveryAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from dps_webhooks.domain.delivery_views import AttemptView, DeliveryView, DeliveryWithAttempts, SentRequest
from dps_webhooks.domain.endpoint_status import EndpointStatus, new_delivery_held
from dps_webhooks.domain.endpoint_views import EndpointView
from dps_webhooks.domain.request_headers import request_headers
from dps_webhooks.services import intake
from dps_webhooks.services.endpoints import endpoint_view, load_endpoint

log = logging.getLogger("dps.webhooks.deliveries")
WHAT = "Webhook delivery"
# the serialized ``webhook.test`` envelope for an endpoint (the one events adapter, given at composition)
WebhookTestEnvelope = Callable[[UUID, EndpointView, datetime], str]


def delivery_view(delivery: WebhookDelivery) -> DeliveryView:
    return DeliveryView(
        id=delivery.id,
        endpoint_id=delivery.endpoint_id,
        event_id=delivery.event_id,
        event_type=delivery.event_type,
        status=delivery.status,
        attempt_count=delivery.attempt_count,
        is_test=delivery.is_test,
        retry_of=delivery.retry_of,
        created_at=delivery.created_at,
        completed_at=delivery.completed_at,
        last_response_status=delivery.last_response_status,
        last_response_excerpt=delivery.last_response_excerpt,
        last_error_message=delivery.last_error_message,
        last_duration_ms=delivery.last_duration_ms,
        last_attempted_at=delivery.last_attempted_at,
        next_attempt_at=delivery.next_attempt_at,
    )


def _attempt_view(attempt: DeliveryAttempt, delivery: WebhookDelivery) -> AttemptView:
    headers = None
    if attempt.webhook_timestamp is not None and attempt.webhook_signature is not None:
        # rebuilt by the sender's own function from what this attempt was signed with: as sent
        headers = request_headers(
            event_id=delivery.event_id,
            delivery_id=delivery.id,
            attempt=attempt.attempt,
            timestamp=attempt.webhook_timestamp,
            signature=attempt.webhook_signature,
        )
    return AttemptView(
        attempt=attempt.attempt,
        attempted_at=attempt.attempted_at,
        response_status=attempt.response_status,
        response_excerpt=attempt.response_excerpt,
        error_message=attempt.error_message,
        duration_ms=attempt.duration_ms,
        request_headers=headers,
    )


def read_event(session: Session, event_id: UUID) -> intake.IncomingEvent:
    """An event read back from its row (an oversized one was stored without its body)."""
    row = session.get_one(WebhookEvent, event_id)
    return intake.IncomingEvent(
        row.id, row.organization_id, row.event_type, row.occurred_at, row.body or "", row.body_bytes
    )


def _load_delivery(session: Session, endpoint: WebhookEndpoint, delivery_id: UUID) -> WebhookDelivery:
    delivery = session.scalar(
        select(WebhookDelivery).where(WebhookDelivery.id == delivery_id, WebhookDelivery.endpoint_id == endpoint.id)
    )
    if delivery is None:
        raise not_found(WHAT)
    return delivery


class DeliveryService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], test_envelope: WebhookTestEnvelope):
        self._tx = tx
        self._now = now
        self._test_envelope = test_envelope

    def list_deliveries(
        self, principal: Principal, endpoint_id: UUID, page: PageRequest, status: str | None
    ) -> list[DeliveryView]:
        """``limit + 1`` deliveries after the page's position, newest first (UUIDv7 ids descending)."""
        with self._tx.read() as session:
            load_endpoint(session, principal.organization_id, endpoint_id)
            stmt = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint_id)
            if status is not None:
                stmt = stmt.where(WebhookDelivery.status == status)
            rows = session.scalars(keyset(stmt, [WebhookDelivery.id], page, descending=True, convert=[UUID]))
            return [delivery_view(row) for row in rows]

    def get_delivery(self, principal: Principal, endpoint_id: UUID, delivery_id: UUID) -> DeliveryWithAttempts:
        with self._tx.read() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id)
            delivery = _load_delivery(session, endpoint, delivery_id)
            attempts = session.scalars(
                select(DeliveryAttempt).where(DeliveryAttempt.delivery_id == delivery.id).order_by(DeliveryAttempt.attempt)
            )
            views = tuple(_attempt_view(a, delivery) for a in attempts)
            body = session.scalar(select(WebhookEvent.body).where(WebhookEvent.id == delivery.event_id))
            return DeliveryWithAttempts(delivery_view(delivery), views, SentRequest(url=endpoint.url, body=body))

    def send_test(self, principal: Principal, endpoint_id: UUID) -> DeliveryView:
        """A ``webhook.test`` event for this endpoint alone, due now even when it is ``PAUSED``."""
        with self._tx() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id, lock=True)
            held = new_delivery_held(EndpointStatus(endpoint.status), revoked=endpoint.revoked_at is not None, is_test=True)
            body = self._test_envelope(principal.organization_id, endpoint_view(endpoint), self._now())
            event = intake.IncomingEvent.from_envelope(body)
            intake.store_event(session, event)
            delivery = intake.add_delivery(session, event, endpoint.id, held=held, is_test=True)
            view = delivery_view(delivery)
        log.info("test delivery created", extra={"webhookConfigId": str(endpoint_id), "deliveryId": str(view.id)})
        return view

    def retry_delivery(self, principal: Principal, endpoint_id: UUID, delivery_id: UUID) -> DeliveryView:
        """A new delivery of the same event: due now, held while the endpoint is ``PAUSED`` (unless
        it retries a test delivery, which stays a test delivery), refused while ``DISABLED``."""
        with self._tx() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id, lock=True)
            original = _load_delivery(session, endpoint, delivery_id)
            held = new_delivery_held(
                EndpointStatus(endpoint.status), revoked=endpoint.revoked_at is not None, is_test=original.is_test
            )
            event = read_event(session, original.event_id)
            delivery = intake.add_delivery(
                session, event, endpoint.id, held=held, is_test=original.is_test, retry_of=original.id
            )
            view = delivery_view(delivery)
        log.info("delivery retried", extra={"deliveryId": str(view.id), "retryOf": str(delivery_id)})
        return view
