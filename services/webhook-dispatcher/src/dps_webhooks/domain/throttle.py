"""An endpoint's turns to be sent to, at its ``rateLimitPerSecond``: GCRA's virtual scheduling.

The generic cell rate algorithm (ITU-T I.371, the one behind redis-cell and throttled's GCRA) keeps
one number per endpoint, its theoretical arrival time (``tat``): the earliest moment the next send may
start. A delivery's turn is ``max(tat, now)`` and taking it moves ``tat`` on by one spacing, so
turns are handed out first come, first served, each one spacing after the one before, however many
workers ask. No burst is allowed (a burst of ``rate`` at the end of one second and again at the
start of the next would put twice the rate in a one-second window that straddles them).

A delivery whose turn is further away than the horizon does not hold its thread until then: it is
given the turn all the same, as a ticket, and is put back in the database until shortly before it;
when it is claimed again, its ticket is its turn. A ticket whose time has passed (its delivery was
not claimed again in time: a worker was full, stopping, or the endpoint was paused) is spent: using it
late would put it next to the turns given after it, so its delivery takes a new turn, the next free.

The spacing is the second divided by the rate, plus ``SPACING_MARGIN``: a turn's request reaches the
receiver a little earlier or later than its turn (a thread wakes late, a connection is reused or
opened), and over a one-second window the margin (20 ms) absorbs that jitter, so that the receiver
counts no more than ``rate`` requests in any one second it measures, not only in the sender's.

The same arithmetic runs in Redis (``adapters/throttle.py``, one Lua script: shared by every worker)
and here, in process, for a worker without a shared store.
"""

from __future__ import annotations

from dataclasses import dataclass

SPACING_MARGIN = 0.02  # each spacing 2 % longer than the rate's: 20 ms of jitter absorbed per second


def spacing_us(rate_per_second: int) -> int:
    """Microseconds between two turns at ``rate_per_second``."""
    return int(1_000_000 * (1 + SPACING_MARGIN) / rate_per_second)


@dataclass(frozen=True)
class Turn:
    """A delivery's turn: ``now`` (within the horizon: wait ``wait_us``, then send) or later (put the
    delivery back, to come back ``wait_us`` from now, shortly before it, holding it as a ticket)."""

    now: bool
    wait_us: int


@dataclass
class Schedule:
    """One endpoint's state: ``tat`` and the tickets handed out (delivery key: turn), in microseconds."""

    tat: int = 0
    tickets: dict[str, int] | None = None


def take_turn(schedule: Schedule, delivery: str, now_us: int, spacing: int, horizon_us: int) -> Turn:
    """The delivery's turn (its ticket's, or the next free one), updating ``schedule``; mirrored by
    ``adapters/throttle.py``'s script, statement for statement."""
    tickets = schedule.tickets if schedule.tickets is not None else {}
    ticket = tickets.pop(delivery, None)
    if ticket is not None and ticket >= now_us:
        turn = ticket
    else:
        turn = max(schedule.tat, now_us)
        schedule.tat = turn + spacing
    if turn - now_us > horizon_us:
        tickets[delivery] = turn
        schedule.tickets = tickets
        return Turn(False, turn - now_us)
    schedule.tickets = tickets
    return Turn(True, turn - now_us)


def come_back_in_us(turn_in_us: int, horizon_us: int) -> int:
    """When a delivery put back is due again: three quarters of the horizon before its turn, so that
    the workers' poll (more often than half the horizon) claims it while its turn is still ahead,
    within the horizon, and its thread waits the rest."""
    return max(0, turn_in_us - horizon_us * 3 // 4)
