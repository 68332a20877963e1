"""Access tokens for platform calls: refreshed before they expire or after a 401, one refresh at a
time per organization across every process and replica.

The platform rolls the refresh token on every refresh (the old one stops working), so two refreshes
racing would lose the grant. A refresh therefore happens under ``SELECT ... FOR UPDATE`` on the
connection row, and the new tokens are committed before the new access token is handed out: whoever
waited on the lock then finds a fresh token and uses it instead of refreshing again. A refresh the
platform refuses with ``invalid_grant`` marks the connection broken (with the reason, and a
``billing.connection.broken`` event) and is never tried again; the admin connects anew.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from dps_common.db import Transactions

from dps_billing.adapters.billing_platform.errors import InvalidGrant
from dps_billing.adapters.tokens import TokenSealer
from dps_billing.db.models import BillingConnection
from dps_billing.services.connection_events import record_broken
from dps_billing.services.connection_lookup import broken_conflict, find_connection, not_connected_conflict
from dps_billing.services.ports import Grant, OAuthApp, Outbox

log = logging.getLogger("dps.billing.access")
REFRESH_MARGIN = timedelta(minutes=5)  # refresh this long before expiry: a push's calls outlive none


@dataclass(frozen=True)
class Access:
    connection_id: UUID
    account_id: str
    livemode: bool
    access_token: str


def store_grant(connection: BillingConnection, grant: Grant, sealer: TokenSealer, now: datetime) -> None:
    connection.access_token_sealed = sealer.seal(connection.id, grant.access_token)
    connection.refresh_token_sealed = sealer.seal(connection.id, grant.refresh_token)
    connection.access_expires_at = grant.expires_at
    connection.updated_at = now


class AccessTokens:
    def __init__(self, tx: Transactions, sealer: TokenSealer, oauth: OAuthApp, now: Callable[[], datetime],
                 outbox: Outbox):
        self._tx = tx
        self._sealer = sealer
        self._oauth = oauth
        self._now = now
        self._outbox = outbox

    def current(self, organization_id: UUID) -> Access:
        """A token good for a few more minutes at least (refreshed first when it is not)."""
        with self._tx.read() as session:
            connection = _usable(find_connection(session, organization_id))
            if connection.access_expires_at > self._now() + REFRESH_MARGIN:
                return self._access(connection)
        return self._refresh(organization_id, stale=None)

    def after_unauthorized(self, organization_id: UUID, rejected_token: str) -> Access:
        """The platform answered 401 to ``rejected_token``: a newer token, refreshing if nobody has."""
        return self._refresh(organization_id, stale=rejected_token)

    def _access(self, connection: BillingConnection) -> Access:
        token = self._sealer.open(connection.id, connection.access_token_sealed)
        return Access(connection.id, connection.account_id, connection.livemode, token)

    def _refresh(self, organization_id: UUID, stale: str | None) -> Access:
        refused: InvalidGrant | None = None
        with self._tx() as session:
            connection = _usable(find_connection(session, organization_id, lock=True))
            current = self._access(connection)
            now = self._now()
            if current.access_token != stale and connection.access_expires_at > now + REFRESH_MARGIN:
                return current  # refreshed by another worker while this one waited for the lock
            refresh_token = self._sealer.open(connection.id, connection.refresh_token_sealed)
            try:
                grant = self._oauth.refresh(refresh_token)
            except InvalidGrant as exc:
                connection.status = "broken"
                connection.broken_reason = f"The platform refused to refresh the access token: {exc.message}"
                connection.updated_at = now
                record_broken(self._outbox, session, connection, now)
                refused = exc
            else:
                store_grant(connection, grant, self._sealer, now)
                connection.refreshed_at = now
                log.info("access token refreshed", extra={"organizationId": str(organization_id)})
                return Access(connection.id, connection.account_id, connection.livemode, grant.access_token)
        log.warning("billing connection broken", extra={"organizationId": str(organization_id)})
        raise broken_conflict(connection.broken_reason) from refused


def _usable(connection: BillingConnection | None) -> BillingConnection:
    if connection is None:
        raise not_connected_conflict()
    if connection.status == "broken":
        raise broken_conflict(connection.broken_reason)
    return connection


