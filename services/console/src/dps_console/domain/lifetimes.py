"""How long a sign-in link and a session live (design: link 15 minutes, single use; session idle
30 minutes, absolute 12 hours)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

LINK_LIFETIME = timedelta(minutes=15)
SESSION_IDLE = timedelta(minutes=30)
SESSION_ABSOLUTE = timedelta(hours=12)


class LinkState(enum.StrEnum):
    USABLE = "usable"
    USED = "used"
    EXPIRED = "expired"


def link_state(expires_at: datetime, used_at: datetime | None, now: datetime) -> LinkState:
    if used_at is not None:
        return LinkState.USED
    if now >= expires_at:
        return LinkState.EXPIRED
    return LinkState.USABLE


class SessionState(enum.StrEnum):
    ACTIVE = "active"
    IDLE = "idle"  # no request for SESSION_IDLE
    EXPIRED = "expired"  # SESSION_ABSOLUTE after sign-in
    ENDED = "ended"  # signed out


@dataclass(frozen=True)
class SessionTimes:
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    ended_at: datetime | None = None


def session_expiry(created_at: datetime) -> datetime:
    return created_at + SESSION_ABSOLUTE


def session_state(times: SessionTimes, now: datetime) -> SessionState:
    if times.ended_at is not None:
        return SessionState.ENDED
    if now >= times.expires_at:
        return SessionState.EXPIRED
    if now - times.last_seen_at >= SESSION_IDLE:
        return SessionState.IDLE
    return SessionState.ACTIVE


def window_start(now: datetime, window_seconds: int) -> datetime:
    """The fixed rate-limit window ``now`` falls in (aligned on the epoch)."""
    epoch = now.timestamp()
    return datetime.fromtimestamp(epoch - epoch % window_seconds, tz=now.tzinfo)
