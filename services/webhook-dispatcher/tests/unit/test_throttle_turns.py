"""GCRA's turns (``domain/throttle.py``), the arithmetic the Redis script repeats: first come, first
served, one spacing apart, a later turn given as a ticket its delivery comes back for, a ticket
whose time passed honoured at once within the horizon and spent beyond it; and the in-process store (``adapters/throttle.py``'s ``LocalTurns``)."""

from __future__ import annotations

import uuid

from dps_webhooks.adapters.throttle import LocalTurns
from dps_webhooks.domain.throttle import Schedule, come_back_in_us, spacing_us, start, take_turn

SECOND = 1_000_000
SPACING = spacing_us(5)  # 5 a second, with the margin
HORIZON = 2 * SECOND


def test_the_spacing_is_a_little_longer_than_the_rate_s():
    assert spacing_us(5) == 220_000 and spacing_us(1000) == 1100 and spacing_us(1) == 1_100_000
    # rate + 1 turns never fit in one second: the rate's first and last are a whole second apart and more
    for rate in (1, 5, 7, 333, 1000):
        assert rate * spacing_us(rate) > SECOND


def test_turns_are_handed_out_in_order_one_spacing_apart():
    schedule = Schedule()
    turns = [take_turn(schedule, f"d{n}", 10 * SECOND, SPACING, HORIZON) for n in range(10)]
    assert all(turn.now for turn in turns)  # 9 spacings: 1.836 s, within the horizon
    assert [turn.wait_us for turn in turns] == [n * SPACING for n in range(10)]
    later = take_turn(schedule, "d10", 10 * SECOND, SPACING, HORIZON)
    assert not later.now and later.wait_us == 10 * SPACING  # beyond the horizon: a ticket


def test_an_idle_endpoint_sends_at_once_and_the_past_is_not_a_credit():
    schedule = Schedule()
    assert take_turn(schedule, "a", 0, SPACING, HORIZON).wait_us == 0
    # a minute later: at once, and the next one a spacing after that (no burst saved up)
    assert take_turn(schedule, "b", 60 * SECOND, SPACING, HORIZON).wait_us == 0
    assert take_turn(schedule, "c", 60 * SECOND, SPACING, HORIZON).wait_us == SPACING


def test_a_delivery_put_back_comes_back_for_its_own_turn_ahead_of_newcomers():
    schedule = Schedule()
    now = 0
    for n in range(10):
        take_turn(schedule, f"d{n}", now, SPACING, HORIZON)
    ticket = take_turn(schedule, "late", now, SPACING, HORIZON)
    assert not ticket.now
    back_in = come_back_in_us(ticket.wait_us, HORIZON)
    assert 0 < back_in < ticket.wait_us and ticket.wait_us - back_in < HORIZON
    newcomer = take_turn(schedule, "new", now, SPACING, HORIZON)  # queued behind the ticket
    assert newcomer.wait_us == 11 * SPACING
    back = take_turn(schedule, "late", now + back_in, SPACING, HORIZON)
    assert back.now and back.wait_us == ticket.wait_us - back_in  # the same moment it was given
    assert schedule.tat == 12 * SPACING  # coming back took no new turn


def test_a_ticket_brought_back_too_early_is_kept_and_one_brought_back_late_is_honoured_at_once():
    schedule = Schedule()
    for n in range(20):
        take_turn(schedule, f"d{n}", 0, SPACING, HORIZON)
    early = take_turn(schedule, "d19", 0, SPACING, HORIZON)  # its ticket, still beyond the horizon
    assert not early.now and early.wait_us == 19 * SPACING and schedule.tat == 20 * SPACING
    take_turn(schedule, "d20", 0, SPACING, HORIZON)  # a newcomer, behind it
    late_at = 19 * SPACING + HORIZON  # its turn went by unused (no worker free): it goes now, in its place
    late = take_turn(schedule, "d19", late_at, SPACING, HORIZON)
    assert late.now and late.wait_us == 0
    assert schedule.tat == 21 * SPACING and "d19" not in (schedule.tickets or {})  # no new turn taken, the ticket used


def test_a_ticket_missed_by_more_than_the_horizon_is_spent():
    schedule = Schedule()
    for n in range(20):
        take_turn(schedule, f"d{n}", 0, SPACING, HORIZON)
    for n in range(20, 40):  # the schedule still busy long after d19's turn
        take_turn(schedule, f"d{n}", 0, SPACING, HORIZON)
    very_late = 19 * SPACING + HORIZON + 1  # the endpoint paused, the workers stopped: its moment is long gone
    late = take_turn(schedule, "d19", very_late, SPACING, HORIZON)
    assert not late.now and late.wait_us == 40 * SPACING - very_late  # the next free turn instead
    assert schedule.tat == 41 * SPACING


def test_a_late_start_keeps_the_spacing_when_a_late_ticket_is_honoured():
    """The missed turn's delivery starts now; the next turn's start waits for the spacing after it."""
    schedule = Schedule()
    for n in range(12):
        take_turn(schedule, f"d{n}", 0, SPACING, HORIZON)
    late_at = 10 * SPACING + 30_000  # d10's turn passed unused; d11's is 80 ms away
    assert take_turn(schedule, "d10", late_at, SPACING, HORIZON).wait_us == 0
    assert start(schedule, late_at, SPACING) == 0
    assert start(schedule, 11 * SPACING, SPACING) == 30_000  # d11 on time, pushed back by the late one


def test_the_local_store_keeps_each_endpoint_apart():
    turns = LocalTurns()
    one, two = uuid.uuid4(), uuid.uuid4()
    assert turns.take(one, uuid.uuid4(), 1, HORIZON).wait_us == 0
    assert turns.take(two, uuid.uuid4(), 1, HORIZON).wait_us == 0  # another endpoint: its own turns
    second = turns.take(one, uuid.uuid4(), 1, HORIZON)
    assert second.now and 0 < second.wait_us <= spacing_us(1)


def test_a_start_comes_no_sooner_than_a_spacing_after_the_last_whoever_woke_late():
    schedule = Schedule()
    assert start(schedule, 0, SPACING) == 0
    # the next turn's thread woke late: it starts when it can, and pushes the one after it back
    assert start(schedule, SPACING + 50_000, SPACING) == 0
    assert start(schedule, 2 * SPACING, SPACING) == 50_000  # on time, but a spacing after the late one
    assert start(schedule, 2 * SPACING + 50_000, SPACING) == 0
