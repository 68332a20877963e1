"""The billing platform connection (spec section 3): the browser's callback, read, and disconnect.
Admin keys only, except the callback (the platform redirects the admin's browser there). The flow's
first steps (authorize, the browser's start) are ``services.connect_flow``.

- ``callback`` refuses a state that is not the browser's own (its nonce cookie), then consumes the
  state row atomically (single use) before anything else, then exchanges
  the code outside any transaction, then stores the connection with its tokens sealed and a
  ``billing.connection.connected`` event. Its outcome is data the resource renders as a page.
- ``disconnect`` asks the platform to deauthorize, then deletes the row (the tokens with it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select, update

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import UpstreamFailed
from dps_common.ids import new_id

from dps_billing.adapters.billing_platform.errors import InvalidGrant, OAuthRejected, PlatformError, PlatformRejected
from dps_billing.adapters.tokens import TokenSealer
from dps_billing.db.models import BillingConnection, OAuthState
from dps_billing.domain.connection_views import ConnectionView
from dps_billing.domain.oauth_state import AuthorizeState, StateRefused, nonce_matches, verify_state
from dps_billing.services.access import store_grant
from dps_billing.services.connection_events import record_connected, record_removed
from dps_billing.services.connection_lookup import connection_view, find_connection, load_connection
from dps_billing.services.ports import Grant, OAuthApp, Outbox
from dps_billing.settings import Settings

log = logging.getLogger("dps.billing.connection")


@dataclass(frozen=True)
class CallbackOutcome:
    """What the callback page tells the admin. ``reason``: ``connected``, ``denied``,
    ``state_invalid``, ``state_expired``, ``state_used``, ``code_missing``, ``code_invalid``,
    ``platform_refused``, ``platform_unavailable``, ``mode_mismatch`` or ``not_this_browser``.
    ``return_url``: the console page to send the browser back to (set once the flow is the browser's
    own and consumed)."""

    reason: str
    message: str
    status: int = 400
    account_id: str | None = None
    return_url: str | None = None

    @property
    def connected(self) -> bool:
        return self.reason == "connected"


def _refused(reason: str, message: str, status: int = 400) -> CallbackOutcome:
    return CallbackOutcome(reason, message, status)


class ConnectionService:
    def __init__(self, tx: Transactions, sealer: TokenSealer, oauth: OAuthApp, settings: Settings,
                 now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._sealer = sealer
        self._oauth = oauth
        self._settings = settings
        self._now = now
        self._outbox = outbox

    def get_connection(self, principal: Principal) -> ConnectionView:
        with self._tx.read() as session:
            return connection_view(load_connection(session, principal.organization_id))

    def callback(self, code: str | None, state_token: str | None, error: str | None,
                 error_description: str | None, browser_nonces: Sequence[str]) -> CallbackOutcome:
        now = self._now()
        if not state_token:
            return _refused("state_invalid", "The link is incomplete: it carries no state. Start again.")
        try:
            state = verify_state(self._settings.billing_state_secret, state_token, now)
        except StateRefused as exc:
            if exc.reason == "expired":
                return _refused("state_expired", "The connection link has expired. Start again from the settings.")
            return _refused("state_invalid", "The connection link is not valid. Start again from the settings.")
        if not nonce_matches(state, browser_nonces):
            if self._consumed_already(state):  # a reload or replay after the callback spent the cookie
                return _refused("state_used", "This connection link was already used. Start again from the "
                                "settings.")
            log.warning("billing callback from another browser", extra={"organizationId": str(state.organization_id)})
            return _refused("not_this_browser", "This connection was started in another browser, or this browser "
                            "does not accept cookies from the service. Start again from the settings, in this "
                            "browser: nothing was connected.")
        consumed = self._consume(state, now)
        if consumed is None:
            return _refused("state_used", "This connection link was already used. Start again from the settings.")
        outcome = self._complete(state, code, error, error_description)
        return replace(outcome, return_url=consumed or None)

    def _complete(self, state: AuthorizeState, code: str | None, error: str | None,
                  error_description: str | None) -> CallbackOutcome:
        """The flow is this browser's own and consumed: the platform's answer, the code's exchange."""
        if error:
            if error == "access_denied":
                return CallbackOutcome("denied", "The app was not installed: the request was denied or cancelled "
                                       "on the billing platform.", 200)
            return _refused("platform_refused", f"The billing platform refused the connection ({error}"
                            f"{': ' + error_description if error_description else ''}).")
        if not code:
            return _refused("code_missing", "The billing platform sent no authorization code. Start again.")
        try:
            grant = self._oauth.exchange_code(code)
        except InvalidGrant:
            return _refused("code_invalid", "The authorization code was already used, has expired or is not "
                            "valid. Start again from the settings.")
        except OAuthRejected as exc:
            return _refused("platform_refused", f"The billing platform refused the connection: {exc.message}")
        except PlatformError:
            log.warning("token exchange failed", extra={"organizationId": str(state.organization_id)})
            return _refused("platform_unavailable", "The billing platform could not be reached. Try again in a "
                            "moment.", 502)
        if grant.livemode != state.livemode:
            self._deauthorize_quietly(grant.account_id)
            mode = "live" if state.livemode else "test"
            return _refused("mode_mismatch", f"The app was installed in the other mode; this service connects "
                            f"in {mode} mode only.")
        replaced = self._store(state, grant, self._now())
        if replaced is not None and replaced != grant.account_id:
            self._deauthorize_quietly(replaced)
        log.info("billing platform connected", extra={"organizationId": str(state.organization_id)})
        return CallbackOutcome("connected", f"Connected to the billing platform account {grant.account_id}.",
                               200, grant.account_id)

    def disconnect(self, principal: Principal) -> None:
        """Deauthorize on the platform, then delete, holding the row's lock throughout: the platform's
        ``account.application.deauthorized`` webhook, sent as it revokes, waits for this transaction
        and then finds nothing left to remove, so the removal is recorded once, by the service."""
        with self._tx() as session:
            connection = load_connection(session, principal.organization_id, lock=True)
            try:
                self._oauth.deauthorize(connection.account_id)
            except PlatformRejected as exc:
                # the platform holds no grant for it any more (removed there already): nothing to revoke
                log.info("deauthorize refused", extra={"organizationId": str(principal.organization_id),
                                                       "code": exc.code})
            except PlatformError:
                raise UpstreamFailed(
                    "The billing platform could not be reached to remove the app; the connection is kept. Retry.",
                    code="billing_platform_unavailable",
                ) from None
            record_removed(self._outbox, session, connection, "service", self._now())
            session.delete(connection)
        log.info("billing platform disconnected", extra={"organizationId": str(principal.organization_id)})

    def _consumed_already(self, state: AuthorizeState) -> bool:
        with self._tx.read() as session:
            return session.scalar(select(OAuthState.consumed_at).where(OAuthState.id == state.id)) is not None

    def _consume(self, state: AuthorizeState, now: datetime) -> str | None:
        """Single use: exactly one callback consumes the row; it must match what was signed, the browser's
        nonce included. None when it is not there (used, expired); else its return URL ('' for none)."""
        with self._tx() as session:
            consumed = session.execute(
                update(OAuthState)
                .where(
                    OAuthState.id == state.id,
                    OAuthState.organization_id == state.organization_id,
                    OAuthState.user_id == state.user_id,
                    OAuthState.livemode == state.livemode,
                    OAuthState.nonce_hash == state.nonce_hash,
                    OAuthState.consumed_at.is_(None),
                    OAuthState.expires_at > now,
                )
                .values(consumed_at=now)
                .returning(OAuthState.return_url)
            ).first()
        return None if consumed is None else (consumed.return_url or "")

    def _store(self, state: AuthorizeState, grant: Grant, now: datetime) -> str | None:
        """The organization's connection now holds ``grant``; the account it replaced, if any."""
        with self._tx() as session:
            existing = find_connection(session, state.organization_id, lock=True)
            replaced = None
            if existing is not None:
                replaced = existing.account_id
                if existing.account_id != grant.account_id or existing.livemode != grant.livemode:
                    record_removed(self._outbox, session, existing, "service", now)
                session.delete(existing)
                session.flush()
            connection = BillingConnection(
                id=new_id(),
                organization_id=state.organization_id,
                account_id=grant.account_id,
                livemode=grant.livemode,
                status="connected",
                broken_reason=None,
                connected_by=state.user_id,
                connected_at=now,
            )
            store_grant(connection, grant, self._sealer, now)
            session.add(connection)
            record_connected(self._outbox, session, connection, now)
        return replaced

    def _deauthorize_quietly(self, account_id: str) -> None:
        try:
            self._oauth.deauthorize(account_id)
        except PlatformError as exc:
            log.warning("deauthorize failed", extra={"code": exc.code})
