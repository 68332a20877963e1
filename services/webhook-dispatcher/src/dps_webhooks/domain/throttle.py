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
not claimed again in time: every thread of the workers was busy, a worker stopping) is still honoured
if it is late by no more than the horizon: the delivery goes at once. Its turn went by unused, so
the endpoint would otherwise get one send fewer than its rate and the delivery would queue again
behind every turn handed out meanwhile. Sending it now cannot crowd the turns after it: every send
goes through ``start``, which keeps starts a spacing apart, so the late one takes the place of the
missed one and the next ones move back by at most a spacing each, until the schedule has a gap. Only
tickets missed within the last horizon are honoured, so what they add to the starts' waits stays
within a horizon's turns; a ticket later than that (the endpoint paused, every worker stopped) is
spent, and its delivery takes a new turn, the next free.

The spacing is the second divided by the rate, plus ``SPACING_MARGIN`` (10 %): starts are exact to
Redis's clock, but a request reaches the receiver some time after its start, and that time varies:
a connection opened for it (TCP and TLS handshakes) against one reused, a busy machine. Measured on
this machine under load 8 on 2 cores, a first request on a new connection arrived up to about 80 ms
later than the ones after it; at 2 % and at 5 % the receiver counted rate + 1 requests in some
second. Over any one-second window the margin absorbs 100 ms of such variation, so that the
receiver counts no more than ``rate`` requests in any second it measures, not only in the sender's;
the price is a steady pace of rate / 1.1 (4.5 a second for 5).

A turn is a moment to start at, and a thread may wake after it (a busy machine, the interpreter's
lock): one late start followed by one on time would put two sends closer than the spacing. So the
thread says when it starts (``start``): not before the last start plus one spacing, else it waits
for that. A late start pushes the next ones back a little, and starts are never closer than the
spacing, whatever the threads' lateness.

The same arithmetic runs in Redis (``adapters/throttle.py``, one Lua script: shared by every worker)
and here, in process, for a worker without a shared store.
"""

from __future__ import annotations

from dataclasses import dataclass

SPACING_MARGIN = 0.10  # each spacing 10 % longer than the rate's: 100 ms of variation absorbed per second


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
    last_start: int | None = None  # when the last send started (``start``)


def take_turn(schedule: Schedule, delivery: str, now_us: int, spacing: int, horizon_us: int) -> Turn:
    """The delivery's turn (its ticket's, at once if it was missed within the horizon, or the next
    free one), updating ``schedule``; mirrored by
    ``adapters/throttle.py``'s script, statement for statement."""
    tickets = schedule.tickets if schedule.tickets is not None else {}
    ticket = tickets.pop(delivery, None)
    if ticket is not None and ticket >= now_us - horizon_us:  # on time, or missed within the horizon
        turn = max(ticket, now_us)
    else:
        turn = max(schedule.tat, now_us)
        schedule.tat = turn + spacing
    if turn - now_us > horizon_us:
        tickets[delivery] = turn
        schedule.tickets = tickets
        return Turn(False, turn - now_us)
    schedule.tickets = tickets
    return Turn(True, turn - now_us)


def start(schedule: Schedule, now_us: int, spacing: int) -> int:
    """A send about to start, at its turn: 0 (started: noted) or the microseconds to wait first, when
    the last start was less than a spacing ago (then ask again)."""
    if schedule.last_start is not None and now_us < schedule.last_start + spacing:
        return schedule.last_start + spacing - now_us
    schedule.last_start = now_us
    return 0


def come_back_in_us(turn_in_us: int, horizon_us: int) -> int:
    """When a delivery put back is due again: three quarters of the horizon before its turn, so that
    the worker that learns of it (its timer to the next due delivery, ``workers/deliveries.py``) claims
    it while its turn is still ahead, within the horizon, and its thread waits the rest; a quarter of
    the horizon is left for a worker whose threads are all busy at that moment."""
    return max(0, turn_in_us - horizon_us * 3 // 4)
