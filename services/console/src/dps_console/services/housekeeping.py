"""Old rows out: sign-in links past their end, sessions over (ended or expired), form results and
rate windows past, once ``keep`` has gone by (``dealpricing-console purge``, e.g. a daily CronJob)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Result, delete, or_

from dps_common.db import Transactions

from dps_console.db.models import ConsoleSession, FormResult, RateCounter, SignInLink

KEEP = timedelta(days=1)


@dataclass(frozen=True)
class Purged:
    links: int
    sessions: int
    counters: int
    forms: int = 0


def purge(tx: Transactions, now: datetime, keep: timedelta = KEEP) -> Purged:
    before = now - keep
    with tx() as session:
        links = _deleted(session.execute(delete(SignInLink).where(SignInLink.expires_at < before)))
        sessions = _deleted(session.execute(delete(ConsoleSession).where(
            or_(ConsoleSession.expires_at < before, ConsoleSession.ended_at < before))))
        counters = _deleted(session.execute(delete(RateCounter).where(RateCounter.window_start < before)))
        forms = _deleted(session.execute(delete(FormResult).where(FormResult.created_at < before)))
    return Purged(links, sessions, counters, forms)


def _deleted(result: Result[Any]) -> int:
    return cast(CursorResult[Any], result).rowcount
