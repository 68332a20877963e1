"""The sign-in mail queue's work: for each request queued by ``EmailLinks.request``, ask the api
whether the email is a person's and, if so, mail them a new link; the row goes once done. Requests
are shared by any number of workers (``dps_common.work_queue``: claims with ``FOR UPDATE SKIP
LOCKED`` under a lease, so a worker that dies leaves its rows due again). A mail server or an api
that fails is tried again later (``retry_delay``), until ``MAX_ATTEMPTS`` or until the link would
be of no use (``LINK_LIFETIME`` after the request): the person asks again."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from sqlalchemy import delete, func, or_, update

from dps_common.db import Transactions
from dps_common.work_queue import WorkQueue

from dps_console.db.models import SignInRequest
from dps_console.domain.lifetimes import LINK_LIFETIME
from dps_console.domain.problems import ServiceRefused, ServiceUnavailable
from dps_console.services.sign_in import MAIL_CHANNEL, EmailLinks

log = logging.getLogger("dps.console.sign_in_mail")
R = SignInRequest
MAX_ATTEMPTS = 8
LEASE_SECONDS = 60.0  # longer than one api call and one SMTP conversation, with their timeouts
BATCH = 10

REQUESTS = WorkQueue(
    R, R.id,
    due=or_(R.due_at.is_(None), R.due_at <= func.now()),
    order_by=R.requested_at,
    channel=MAIL_CHANNEL,
    lease_until=R.due_at,
    token=R.claim_token,
)
_CLAIM = REQUESTS.claim_statement(values={"attempts": R.attempts + 1},
                                  returning=[R.id, R.email, R.requested_at, R.attempts])
FAILURES = (ServiceUnavailable, ServiceRefused, smtplib.SMTPException, OSError)


def retry_delay(attempts: int) -> timedelta:
    """After the ``attempts``-th failure: 2, 4, 8 ... seconds, at most a minute."""
    return timedelta(seconds=min(2 ** attempts, 60))


@dataclass(frozen=True)
class Claimed:
    id: UUID
    email: str
    requested_at: datetime
    attempts: int
    token: UUID


class SignInMail:
    def __init__(self, tx: Transactions, links: EmailLinks, now: Callable[[], datetime]):
        self._tx = tx
        self._links = links
        self._now = now

    def send_due(self, limit: int = BATCH) -> int:
        """Works the due requests, up to ``limit``; how many were claimed."""
        with self._tx() as session:
            token, rows = REQUESTS.claim(session, _CLAIM, limit, LEASE_SECONDS)
        for row in rows:
            self._work(Claimed(row.id, row.email, row.requested_at, row.attempts, token))
        return len(rows)

    def pending(self) -> int:
        """Requests not yet done (the tests and the bench wait for none)."""
        with self._tx.read() as session:
            return int(session.scalar(func.count(R.id).select()) or 0)

    def _work(self, request: Claimed) -> None:
        try:
            if self._links.is_known(request.email):
                self._links.mail_link(request.email)
        except FAILURES as exc:
            self._failed(request, exc)
            return
        with self._tx() as session:
            session.execute(delete(R).where(REQUESTS.holding(request.id, request.token)))

    def _failed(self, request: Claimed, exc: Exception) -> None:
        now = self._now()
        give_up = request.attempts >= MAX_ATTEMPTS or now + retry_delay(request.attempts) > request.requested_at + LINK_LIFETIME
        log.error("sign-in mail not sent", extra={"error": type(exc).__name__, "attempts": request.attempts,
                                                   "givenUp": give_up})
        with self._tx() as session:
            if give_up:
                session.execute(delete(R).where(REQUESTS.holding(request.id, request.token)))
            else:  # due again after the delay, for any worker
                session.execute(update(R).where(REQUESTS.holding(request.id, request.token))
                                .values(due_at=now + retry_delay(request.attempts), claim_token=None))
