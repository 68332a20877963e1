"""Signing in. Every method ends in a ``VerifiedEmail`` that ``Sessions.start`` turns into a
session; this module holds the one method there is, one-time links by mail (``EmailLinks``). A
second method (OIDC) is another class here ending in the same ``VerifiedEmail``, with its own pages.

A link is 256 random bits, kept as a SHA-256 hash, good once, for 15 minutes. Asking for one answers
the same, and as fast, whether the email is known or not: the request is only counted (per email and
per client address, fixed windows in the console's database) and queued; a worker
(``services.sign_in_mail``) asks the api who is known and mails only them."""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert

from dps_common.db import Transactions
from dps_common.work_queue import notify

from dps_console.adapters.console_credentials import ConsoleCredentials
from dps_console.db.models import RateCounter, SignInLink, SignInRequest
from dps_console.domain.lifetimes import LINK_LIFETIME, LinkState, link_state, window_start
from dps_console.domain.problems import ServiceRefused, ServiceUnavailable
from dps_console.domain.tokens import looks_like_token, new_token, token_hash
from dps_console.services.ports import Mailer

log = logging.getLogger("dps.console.sign_in")
MAX_EMAIL_LENGTH = 320
MAIL_CHANNEL = "console_sign_in_mail"  # NOTIFY'd when a sign-in mail is queued: the workers LISTEN


@dataclass(frozen=True)
class VerifiedEmail:
    """Who a sign-in method vouched for."""

    email: str
    method: str


class LinkRequest(enum.Enum):
    ACCEPTED = "accepted"  # queued: mailed later, or not (unknown email); the answer is the same
    RATE_LIMITED = "rate_limited"


@dataclass(frozen=True)
class RateLimits:
    per_email: int
    per_client: int
    window_seconds: int


def normalize_email(raw: str) -> str | None:
    email = raw.strip().lower()
    local, at, domain = email.partition("@")
    if not at or not local or "." not in domain or len(email) > MAX_EMAIL_LENGTH:
        return None
    if any(c.isspace() or c in "<>,;\"" for c in email):
        return None
    return email


class EmailLinks:
    method = "email-link"

    def __init__(self, tx: Transactions, credentials: ConsoleCredentials, mailer: Mailer, public_url: str,
                 limits: RateLimits, now: Callable[[], datetime]):
        self._tx = tx
        self._credentials = credentials
        self._mailer = mailer
        self._public_url = public_url
        self._limits = limits
        self._now = now

    def request(self, email: str, client: str) -> LinkRequest:
        """``email`` normalized (``normalize_email``). Counted and, within the limits, queued in one
        transaction; nothing here depends on whether the email is known."""
        with self._tx() as session:
            if not self._within_limits(session, email, client):
                log.info("sign-in link refused: rate limited")
                return LinkRequest.RATE_LIMITED
            session.add(SignInRequest(id=uuid4(), email=email, requested_at=self._now(), attempts=0))
            notify(session, MAIL_CHANNEL)
        return LinkRequest.ACCEPTED

    def mail_link(self, email: str) -> None:
        """A new link mailed to a person the api knows (the queue's worker); raises what the mail
        server's failure raises (``smtplib.SMTPException``, ``OSError``)."""
        self._mailer.send(email, "Your sign-in link", _mail_body(self.issue_link(email)))
        log.info("sign-in link sent")

    def link_url(self, token: str) -> str:
        return f"{self._public_url}/sign-in/link?token={token}"

    def is_known(self, email: str) -> bool:
        return self._credentials.is_candidate(email)

    def operator_link(self, raw_email: str) -> str:
        """A link without mail for an operator (``dealpricing-console sign-in-link``). Raises
        ``ValueError`` for no email address, ``LookupError`` when no active user has it, and
        ``ConnectionError`` when the api did not answer (the messages say so)."""
        email = normalize_email(raw_email)
        if email is None:
            raise ValueError(f"not an email address: {raw_email!r}")
        try:
            known = self.is_known(email)
        except (ServiceRefused, ServiceUnavailable) as exc:
            raise ConnectionError(f"the api did not answer: {exc}") from None
        if not known:
            raise LookupError(f"no active user has the email {email}")
        return self.issue_link(email)

    def issue_link(self, email: str) -> str:
        """A link without mail, for operators (``dealpricing-console sign-in-link``); the email must be known."""
        token = new_token()
        now = self._now()
        with self._tx() as session:
            session.add(SignInLink(token_hash=token_hash(token), email=email, created_at=now,
                                   expires_at=now + LINK_LIFETIME))
        return self.link_url(token)

    def usable(self, token: str | None) -> bool:
        """Whether the link's page should offer the Sign in button (nothing is used up)."""
        if token is None or not looks_like_token(token):
            return False
        with self._tx.read() as session:
            link = session.get(SignInLink, token_hash(token))
            return link is not None and link_state(link.expires_at, link.used_at, self._now()) is LinkState.USABLE

    def redeem(self, token: str | None) -> VerifiedEmail | None:
        """Uses the link up: None when unknown, used or expired."""
        if token is None or not looks_like_token(token):
            return None
        now = self._now()
        with self._tx() as session:
            link = session.scalar(select(SignInLink).where(SignInLink.token_hash == token_hash(token)).with_for_update())
            if link is None or link_state(link.expires_at, link.used_at, now) is not LinkState.USABLE:
                return None
            session.execute(update(SignInLink).where(SignInLink.token_hash == link.token_hash).values(used_at=now))
            return VerifiedEmail(link.email, self.method)

    def _within_limits(self, session: Any, email: str, client: str) -> bool:
        start = window_start(self._now(), self._limits.window_seconds)
        counts = []
        for bucket in (f"email:{email}", f"client:{client}"):
            counted = insert(RateCounter).values(bucket=bucket, window_start=start, count=1).on_conflict_do_update(
                index_elements=[RateCounter.bucket, RateCounter.window_start], set_={"count": RateCounter.count + 1}
            ).returning(RateCounter.count)
            counts.append(session.execute(counted).scalar_one())
        return counts[0] <= self._limits.per_email and counts[1] <= self._limits.per_client


def _mail_body(url: str) -> str:
    return (
        "Someone (we hope you) asked to sign in to the Deal Pricing settings console.\n\n"
        f"Open this link within 15 minutes, then press \"Sign in\":\n\n{url}\n\n"
        "The link works once. If you did not ask for it, ignore this mail: nothing happens.\n"
    )
