"""The first two steps of connecting (spec section 3), bound to the admin's browser (RFC 6749 section
10.12: a callback carrying a state is accepted only from the browser that started the flow).

- ``authorize`` (the admin's key): a flow row with a start ticket, good for ``TICKET_TTL`` and one
  use, and the optional return URL of the console; answers the start URL. Only the ticket's SHA-256
  is stored.
- ``start`` (the browser, no key): redeems the ticket once, makes a fresh nonce for the browser's
  cookie, stores its SHA-256 on the row and binds it into the signed state of the platform's
  authorize URL. The callback (``services.connection``) accepts the state only with that cookie.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode, urlsplit

from sqlalchemy import delete, update

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import ValidationFailed
from dps_common.ids import new_id

from dps_billing.db.models import OAuthState
from dps_billing.domain.connection_views import StartLink
from dps_billing.domain.oauth_state import AuthorizeState, hash_secret, sign_state
from dps_billing.settings import Settings, start_url

log = logging.getLogger("dps.billing.connection")
TICKET_TTL = timedelta(minutes=5)  # the start URL: opened at once by the console, or pasted by the admin
STATES_KEPT = timedelta(days=1)  # consumed and expired flows are deleted after this


@dataclass(frozen=True)
class Started:
    """The platform's authorize URL, and the nonce the browser's cookie carries until ``expires_at``."""

    authorize_url: str
    nonce: str
    expires_at: datetime


def check_return_url(console_url: str, value: str) -> str:
    """``value`` is under ``console_url``: same scheme and host, and its path the console's or below it
    (a plain prefix test would let ``https://console.example.com.evil.test`` through)."""
    def refuse(message: str) -> ValidationFailed:
        return ValidationFailed(f"returnUrl: {message}",
                                extra={"errors": [{"field": "returnUrl", "message": message}]})

    if not console_url:
        raise refuse("no console URL is configured (CONSOLE_URL): a return URL cannot be accepted")
    base, target = urlsplit(console_url), urlsplit(value)
    base_path = base.path.rstrip("/")
    inside = (target.scheme, target.netloc.lower()) == (base.scheme, base.netloc.lower()) and (
        target.path == base_path or target.path.startswith(base_path + "/") or (not base_path and not target.path)
    )
    if not value.startswith(console_url.rstrip("/")) or not inside or target.fragment or "\\" in value:
        raise refuse(f"must be a URL of the console, under {console_url}")
    return value


class ConnectFlow:
    def __init__(self, tx: Transactions, settings: Settings, now: Callable[[], datetime]):
        self._tx = tx
        self._settings = settings
        self.now = now

    def authorize(self, principal: Principal, return_url: str | None) -> StartLink:
        if return_url is not None:
            check_return_url(self._settings.console_url, return_url)
        now = self.now()
        ticket = secrets.token_urlsafe(32)
        expires_at = now + timedelta(seconds=self._settings.state_ttl_seconds)
        ticket_expires_at = min(expires_at, now + TICKET_TTL)
        with self._tx() as session:
            session.execute(delete(OAuthState).where(OAuthState.expires_at < now - STATES_KEPT))
            session.add(OAuthState(
                id=new_id(), organization_id=principal.organization_id, user_id=principal.user_id,
                livemode=self._settings.billing_livemode, expires_at=expires_at,
                ticket_hash=hash_secret(ticket), ticket_expires_at=ticket_expires_at, return_url=return_url,
            ))
        log.info("billing connect flow issued", extra={"organizationId": str(principal.organization_id)})
        return StartLink(f"{start_url(self._settings)}?{urlencode({'ticket': ticket})}", ticket_expires_at)

    def start(self, ticket: str | None) -> Started | None:
        """The flow bound to this browser, or None: the ticket is unknown, used or expired."""
        if not ticket:
            return None
        now = self.now()
        nonce = secrets.token_urlsafe(32)
        with self._tx() as session:
            row = session.execute(
                update(OAuthState)
                .where(
                    OAuthState.ticket_hash == hash_secret(ticket),
                    OAuthState.started_at.is_(None),
                    OAuthState.ticket_expires_at > now,
                    OAuthState.expires_at > now,
                )
                .values(started_at=now, nonce_hash=hash_secret(nonce))
                .returning(OAuthState.id, OAuthState.organization_id, OAuthState.user_id, OAuthState.livemode,
                           OAuthState.expires_at)
            ).first()
        if row is None:
            return None
        state = AuthorizeState(id=row.id, organization_id=row.organization_id, user_id=row.user_id,
                               livemode=row.livemode, expires_at=row.expires_at, nonce_hash=hash_secret(nonce))
        query = urlencode({
            "client_id": self._settings.billing_client_id,
            "redirect_uri": self._settings.billing_redirect_uri,
            "state": sign_state(self._settings.billing_state_secret, state),
        })
        log.info("billing connect flow started", extra={"organizationId": str(state.organization_id)})
        return Started(f"{self._settings.billing_marketplace_url}/oauth/v2/authorize?{query}", nonce, row.expires_at)
