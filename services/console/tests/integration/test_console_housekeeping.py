"""``purge``: links, sessions and rate windows over for a day go; live ones stay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

from sqlalchemy import select

from dps_console.db.models import ConsoleSession, RateCounter, SignInLink
from dps_console.domain.tokens import new_token, token_hash
from dps_console.services.housekeeping import purge

NOW = datetime.now(UTC)  # rows other tests committed are newer than a day: never purged here


def _session(created: datetime, ended: datetime | None = None) -> ConsoleSession:
    return ConsoleSession(id=uuid4(), cookie_hash=token_hash(new_token()), email="p@x.example", person={},
                          credential_sealed=b"x", credential_key_id="k", created_at=created, last_seen_at=created,
                          expires_at=created + timedelta(hours=12), ended_at=ended)


def test_purge_removes_what_is_over_for_a_day_and_keeps_the_rest(tx):
    day = timedelta(days=1)
    old_link = SignInLink(token_hash=token_hash(new_token()), email="a@x.example", created_at=NOW - 2 * day,
                          expires_at=NOW - 2 * day + timedelta(minutes=15))
    live_link = SignInLink(token_hash=token_hash(new_token()), email="b@x.example", created_at=NOW,
                           expires_at=NOW + timedelta(minutes=15))
    expired = _session(NOW - 3 * day)
    ended_lately = _session(NOW - timedelta(hours=2), ended=NOW - timedelta(hours=1))  # kept a while yet
    live = _session(NOW - timedelta(hours=1))
    old_window = RateCounter(bucket="email:purge@x.example", window_start=NOW - 2 * day, count=3)
    window = RateCounter(bucket="email:purge@x.example", window_start=NOW, count=1)
    keys = {"links": (old_link.token_hash, live_link.token_hash), "sessions": (expired.id, ended_lately.id, live.id)}
    with tx() as session:
        session.add_all([old_link, live_link, expired, ended_lately, live, old_window, window])
    purged = purge(tx, NOW)
    assert (purged.links, purged.sessions, purged.counters) == (1, 1, 1)
    with tx.read() as session:
        assert [session.get(SignInLink, k) is not None for k in keys["links"]] == [False, True]
        assert [session.get(ConsoleSession, k) is not None for k in keys["sessions"]] == [False, True, True]
        windows = session.scalars(select(RateCounter.window_start).where(RateCounter.bucket == "email:purge@x.example"))
        assert list(windows) == [NOW]
    assert purge(tx, NOW) == type(purged)(0, 0, 0)
