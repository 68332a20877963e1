"""One action per submitted form. Every form carries a one-time token; the first submission of a
token claims it and, once its action is done, records where it went (POST, redirect, GET). A repeat
of the token (a double click, a reload, Back and submit) acts no more: it is sent to the same page,
after the first has finished if it still runs. The token also goes to the owning service as the
``Idempotency-Key``, so even a claim taken over after a crash never acts twice there.

A secret the action answered (a new API key, a signing secret, the billing platform's start link)
crosses the redirect sealed here (AES-256-GCM under the console's key, the session and token as
associated data) for at most ``SEALED_FOR``, and is wiped at its page's first read: a second read
finds nothing, and the page says the secret was shown once."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert

from dps_common.crypto import SecretBox
from dps_common.db import Transactions

from dps_console.db.models import FormResult

SEALED_FOR = timedelta(minutes=1)
TAKE_OVER_AFTER = timedelta(seconds=60)  # a first submission still unfinished by then died with its process
WAIT_SECONDS = 15.0  # how long a repeat waits for the first submission to finish
_POLL_SECONDS = 0.1


@dataclass(frozen=True)
class ShownOnce:
    """The once-shown page of a form's result: its words, and the secret on the first read only."""

    page: dict[str, Any]
    secret: str | None


class FormResults:
    def __init__(self, tx: Transactions, box: SecretBox, now: Callable[[], datetime]):
        self._tx = tx
        self._box = box
        self._now = now

    def claim(self, session_id: UUID, token: str) -> bool:
        """True when this submission is the token's first (or takes over one that died): act. False
        for a repeat: ``earlier`` says where the first went."""
        now = self._now()
        claiming = insert(FormResult).values(session_id=session_id, form_token=token, created_at=now)
        with self._tx() as session:
            if session.execute(claiming.on_conflict_do_nothing().returning(FormResult.form_token)).first():
                return True
            taken = session.execute(
                update(FormResult)
                .where(FormResult.session_id == session_id, FormResult.form_token == token,
                       FormResult.location.is_(None), FormResult.created_at < now - TAKE_OVER_AFTER)
                .values(created_at=now).returning(FormResult.form_token)
            ).first()
        return taken is not None

    def earlier(self, session_id: UUID, token: str, wait_seconds: float = WAIT_SECONDS) -> str | None:
        """Where the token's first submission went, once it has finished (waiting for it at most
        ``wait_seconds``); None if it is still running by then."""
        deadline = time.monotonic() + wait_seconds
        while True:
            with self._tx.read() as session:
                location = session.scalar(select(FormResult.location).where(
                    FormResult.session_id == session_id, FormResult.form_token == token))
            if location is not None or time.monotonic() >= deadline:
                return location
            time.sleep(_POLL_SECONDS)

    def finish(self, session_id: UUID, token: str, location: str, *, page: dict[str, Any] | None = None,
               secret: str | None = None) -> None:
        """Record where the submission went; ``secret`` sealed for its page's first read."""
        now = self._now()
        values: dict[str, Any] = {"location": location, "page": page}
        if secret is not None:
            values |= {"sealed": self._box.seal(secret, _associated(session_id, token)), "sealed_until": now + SEALED_FOR}
        with self._tx() as session:
            session.execute(update(FormResult).where(FormResult.session_id == session_id,
                                                     FormResult.form_token == token).values(**values))
            _wipe_expired(session, now)

    def forget(self, session_id: UUID, token: str) -> None:
        """The action was refused or failed: nothing happened, and the token may be sent again."""
        with self._tx() as session:
            session.execute(delete(FormResult).where(FormResult.session_id == session_id,
                                                     FormResult.form_token == token, FormResult.location.is_(None)))

    def take(self, session_id: UUID, token: str) -> ShownOnce | None:
        """The once-shown page of the token, its secret on the first read within ``SEALED_FOR`` (then
        wiped); None when this session has no such page."""
        now = self._now()
        with self._tx() as session:
            _wipe_expired(session, now)
            row = session.scalar(select(FormResult).where(
                FormResult.session_id == session_id, FormResult.form_token == token,
                FormResult.page.is_not(None)).with_for_update())
            if row is None or row.page is None:
                return None
            sealed, page = row.sealed, dict(row.page)
            row.sealed, row.sealed_until = None, None
        secret = self._box.open(sealed, _associated(session_id, token)) if sealed is not None else None
        return ShownOnce(page, secret)


def _associated(session_id: UUID, token: str) -> bytes:
    return session_id.bytes + token.encode()


def _wipe_expired(session: Any, now: datetime) -> None:
    session.execute(update(FormResult).where(FormResult.sealed_until < now).values(sealed=None, sealed_until=None))
