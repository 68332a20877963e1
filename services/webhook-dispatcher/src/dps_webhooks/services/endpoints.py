"""Webhook endpoints (``/webhook-configs``): list, read, create, update, revoke, rotate the secret.

Every use case is scoped to the caller's organization: another organization's endpoint is a 404
like a missing one. A URL is vetted (``adapters/url_guard.py``) before the transaction opens, because vetting
resolves the host and a slow DNS answer must not hold a database transaction open. Status changes
lock the row, so they serialise with each other and with the worker's failure counting.
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
from dps_common.errors import invalid_field, not_found
from dps_common.ids import new_id
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_webhooks.adapters.signing_secrets import SecretSealer, new_signing_secret
from dps_webhooks.adapters.url_guard import UrlRefused, vet_url
from dps_webhooks.db.deliveries import hold_pending, release_held
from dps_webhooks.db.models import WebhookEndpoint
from dps_webhooks.domain.endpoint_commands import KEEP, CreateEndpoint, UpdateEndpoint
from dps_webhooks.domain.endpoint_status import (
    REVOKED_REASON,
    EndpointStatus,
    change_status,
    ensure_not_revoked,
)
from dps_webhooks.domain.endpoint_views import EndpointView, EndpointWithSecret
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.endpoints")
WHAT = "Webhook config"


def endpoint_view(endpoint: WebhookEndpoint) -> EndpointView:
    """The endpoint as read; never the secret."""
    return EndpointView(
        id=endpoint.id,
        url=endpoint.url,
        description=endpoint.description,
        event_types=tuple(endpoint.event_types),
        status=endpoint.status,
        consecutive_failures=endpoint.consecutive_failures,
        disabled_reason=endpoint.disabled_reason,
        created_at=endpoint.created_at,
        updated_at=endpoint.updated_at,
        secret_rotated_at=endpoint.secret_rotated_at,
        revoked_at=endpoint.revoked_at,
        rate_limit_per_second=endpoint.rate_limit_per_second,
    )


def load_endpoint(session: Session, organization_id: UUID, endpoint_id: UUID, *, lock: bool = False) -> WebhookEndpoint:
    """The organization's endpoint (locked for update when asked), or a 404."""
    stmt = select(WebhookEndpoint).where(
        WebhookEndpoint.id == endpoint_id, WebhookEndpoint.organization_id == organization_id
    )
    endpoint = session.scalar(stmt.with_for_update() if lock else stmt)
    if endpoint is None:
        raise not_found(WHAT)
    return endpoint


class EndpointService:
    def __init__(self, tx: Transactions, sealer: SecretSealer, settings: Settings, now: Callable[[], datetime]):
        self._tx = tx
        self._sealer = sealer
        self._allowed_networks = settings.allowed_networks
        self._insecure_loopback = settings.allow_insecure_loopback
        self._now = now

    def _vet(self, url: str) -> None:
        try:
            vet_url(url, self._allowed_networks, insecure_loopback=self._insecure_loopback)
        except UrlRefused as exc:
            raise invalid_field("url", str(exc)) from None

    def list_endpoints(self, principal: Principal, page: PageRequest) -> list[EndpointView]:
        """``limit + 1`` endpoints after the page's position, in id (creation) order."""
        stmt = select(WebhookEndpoint).where(WebhookEndpoint.organization_id == principal.organization_id)
        with self._tx.read() as session:
            rows = session.scalars(keyset(stmt, [WebhookEndpoint.id], page, convert=[UUID]))
            return [endpoint_view(row) for row in rows]

    def get_endpoint(self, principal: Principal, endpoint_id: UUID) -> EndpointView:
        with self._tx.read() as session:
            return endpoint_view(load_endpoint(session, principal.organization_id, endpoint_id))

    def create_endpoint(self, principal: Principal, command: CreateEndpoint) -> EndpointWithSecret:
        """A new ``ACTIVE`` endpoint and its signing secret, shown in this answer only."""
        self._vet(command.url)
        endpoint_id, secret, now = new_id(), new_signing_secret(), self._now()
        with self._tx() as session:
            endpoint = WebhookEndpoint(
                id=endpoint_id,
                organization_id=principal.organization_id,
                url=command.url,
                description=command.description,
                event_types=list(command.event_types),
                rate_limit_per_second=command.rate_limit_per_second,
                status=EndpointStatus.ACTIVE.value,
                consecutive_failures=0,
                secret_sealed=self._sealer.seal(endpoint_id, secret),
                created_at=now,
                updated_at=now,
            )
            session.add(endpoint)
            session.flush()
            view = endpoint_view(endpoint)
        log.info(
            "webhook config created",
            extra={"organizationId": str(principal.organization_id), "webhookConfigId": str(endpoint_id)},
        )
        return EndpointWithSecret(view, secret)

    def update_endpoint(self, principal: Principal, endpoint_id: UUID, command: UpdateEndpoint) -> EndpointView:
        if command.url is not None:
            self._vet(command.url)
        with self._tx() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id, lock=True)
            current = EndpointStatus(endpoint.status)
            change = change_status(current, command.status, revoked=endpoint.revoked_at is not None)
            if command.url is not None:
                endpoint.url = command.url
            if command.description is not None:
                endpoint.description = command.description
            if command.event_types is not None:
                endpoint.event_types = list(command.event_types)
            if command.rate_limit_per_second is not KEEP:  # the workers' next claims send at the new rate
                endpoint.rate_limit_per_second = command.rate_limit_per_second
            endpoint.status = change.status.value
            if change.reset_failures:
                endpoint.consecutive_failures = 0
                endpoint.disabled_reason = None
            if change.hold_pending:
                hold_pending(session, endpoint.id, keep_tests=True)
            if change.release_held:
                release_held(session, endpoint.id)
            if session.is_modified(endpoint):
                endpoint.updated_at = self._now()
            session.flush()
            view = endpoint_view(endpoint)
        if change.status is not current:
            log.info(
                "webhook config status changed",
                extra={"webhookConfigId": str(endpoint_id), "fromStatus": current.value, "toStatus": change.status.value},
            )
        return view

    def revoke_endpoint(self, principal: Principal, endpoint_id: UUID) -> None:
        """``DISABLED`` for good, its waiting deliveries held forever (test ones too). Idempotent."""
        with self._tx() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id, lock=True)
            if endpoint.revoked_at is not None:
                return
            now = self._now()
            endpoint.status = EndpointStatus.DISABLED.value
            endpoint.disabled_reason = REVOKED_REASON
            endpoint.revoked_at = now
            endpoint.updated_at = now
            hold_pending(session, endpoint.id, keep_tests=False)
        log.info("webhook config revoked", extra={"webhookConfigId": str(endpoint_id)})

    def rotate_secret(self, principal: Principal, endpoint_id: UUID) -> EndpointWithSecret:
        """A new secret, shown in this answer only. The worker reads the sealed secret at each
        attempt, so the next attempt is signed with the new secret alone."""
        secret = new_signing_secret()
        with self._tx() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id, lock=True)
            ensure_not_revoked(endpoint.revoked_at is not None)
            now = self._now()
            endpoint.secret_sealed = self._sealer.seal(endpoint.id, secret)
            endpoint.secret_rotated_at = now
            endpoint.updated_at = now
            session.flush()
            view = endpoint_view(endpoint)
        log.info("webhook config secret rotated", extra={"webhookConfigId": str(endpoint_id)})
        return EndpointWithSecret(view, secret)
