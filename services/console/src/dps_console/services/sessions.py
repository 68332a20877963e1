"""Console sessions, server-side. The browser's cookie holds a random value; the row keeps its hash,
the person as the api described them, and their console credential sealed (AES-256-GCM, the row's
id as associated data). Idle 30 minutes or 12 hours after sign-in, a session is over; signing out
ends it at once. Every end revokes the credential at the api."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID, uuid4

from sqlalchemy import select, update

from dps_common.crypto import SecretBox
from dps_common.db import Transactions

from dps_console.adapters.console_credentials import ConsoleCredentials
from dps_console.db.models import ConsoleSession
from dps_console.domain.lifetimes import SessionState, SessionTimes, session_expiry, session_state
from dps_console.domain.people import Person
from dps_console.domain.problems import ServiceRefused, ServiceUnavailable
from dps_console.domain.tokens import looks_like_token, new_token, token_hash
from dps_console.services.sign_in import VerifiedEmail

log = logging.getLogger("dps.console.sessions")


@dataclass(frozen=True)
class ActiveSession:
    id: UUID
    cookie: str  # the browser's value: what CSRF tokens are bound to
    person: Person
    credential: str  # the person's console credential, for the calls to the services (never to the browser)
    notice: str | None = None


class Sessions:
    def __init__(self, tx: Transactions, box: SecretBox, credentials: ConsoleCredentials, now: Callable[[], datetime]):
        self._tx = tx
        self._box = box
        self._credentials = credentials
        self._now = now

    def start(self, who: VerifiedEmail) -> ActiveSession | None:
        """A new session (a new cookie value), with a credential the api issued for it; None when
        the api knows no active user with that email any more."""
        session_id = uuid4()
        credential = self._credentials.issue(who.email, str(session_id))
        if credential is None:
            return None
        cookie = new_token()
        now = self._now()
        with self._tx() as session:
            session.add(ConsoleSession(
                id=session_id, cookie_hash=token_hash(cookie), email=who.email, person=credential.person.to_json(),
                credential_sealed=self._box.seal(credential.secret, session_id.bytes),
                credential_key_id=credential.key_id, created_at=now, last_seen_at=now,
                expires_at=session_expiry(now),
            ))
        log.info("session started", extra={"sessionId": str(session_id), "method": who.method})
        return ActiveSession(session_id, cookie, credential.person, credential.secret)

    def load(self, cookie: str | None, *, take_notice: bool = False) -> ActiveSession | None:
        """The live session of this cookie (its idle clock restarted), or None. A session found
        idle or expired is ended (and its credential revoked) on the way."""
        if cookie is None or not looks_like_token(cookie):
            return None
        now = self._now()
        with self._tx() as session:
            row = session.scalar(select(ConsoleSession).where(ConsoleSession.cookie_hash == token_hash(cookie)))
            if row is None:
                return None
            state = session_state(SessionTimes(row.created_at, row.last_seen_at, row.expires_at, row.ended_at), now)
            if state is SessionState.ENDED:
                return None
            if state is not SessionState.ACTIVE:
                row.ended_at = now
                key_id = row.credential_key_id
                active = None
            else:
                row.last_seen_at = now
                notice = row.notice if take_notice else None
                if take_notice:
                    row.notice = None
                active = ActiveSession(row.id, cookie, Person.from_json(row.person),
                                       self._box.open(row.credential_sealed, row.id.bytes), notice)
        if active is None:
            log.info("session timed out", extra={"state": state.value})
            self._revoke(key_id)
        return active

    def end(self, active: ActiveSession) -> None:
        now = self._now()
        with self._tx() as session:
            key_id = session.scalar(
                update(ConsoleSession).where(ConsoleSession.id == active.id, ConsoleSession.ended_at.is_(None))
                .values(ended_at=now).returning(ConsoleSession.credential_key_id)
            )
        if key_id is not None:
            log.info("session ended", extra={"sessionId": str(active.id)})
            self._revoke(key_id)

    def note(self, active: ActiveSession, notice: str) -> None:
        """A one-line message for the next page shown in this session."""
        with self._tx() as session:
            session.execute(update(ConsoleSession).where(ConsoleSession.id == active.id).values(notice=notice[:500]))

    def _revoke(self, key_id: str) -> None:
        try:
            self._credentials.revoke(key_id)
        except (ServiceRefused, ServiceUnavailable) as exc:  # it expires on its own at the session's end
            log.warning("console credential not revoked", extra={"keyId": key_id, "error": str(exc)})
