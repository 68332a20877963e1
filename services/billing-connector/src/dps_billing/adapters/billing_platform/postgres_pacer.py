"""The platform's ``Pacer`` on PostgreSQL, shared by every worker of every replica: at most
``per_second`` calls per account in any one-second window, as the platform receives them.

A turn is two steps around the call (``dps_billing.adapters.billing_platform.pacing`` says why):

1. Reserve (one statement): the account's row (``billing_pacer_slots``) gives the turn its place in
   the account's sequence and its even slot, one interval after the previous one's, and the turn is
   recorded (``billing_pacer_turns``, running). The caller sleeps until the slot.
2. Gate: the turns one window's worth before it (``seq <= mine - calls``) must all have ended, and
   the call starts no sooner than a second after the last of them ended. The platform received each
   of those before it answered, and receives this one after it starts: so no one-second window at the
   platform holds more than ``calls`` of them, whatever the latency of each and however late a call
   reached the platform after its turn (retries are turns too).
3. When the call ends (answered, failed, given up) the turn is marked ended, and the account's turns
   that no longer matter (ended a second ago) are deleted.

A turn whose worker died while calling must not hold the account's calls up for long. A turn taken for
a push (``for_claim``: the runner binds the push and its claim token) records that claim, and counts as
ended as soon as the claim no longer holds the push under a live lease (its worker died: the lease
ran out, and another worker may take the push over at once); the gate marks such turns ended when it
finds them. Any other turn (a token refresh) counts as ended ``STALE_AFTER`` after its slot. Times
come from the database clock only (no skew between replicas); rows are locked for a statement at a
time, never across a sleep or a call. Waiting for a turn still running is a poll every few
milliseconds: it happens only when calls take about as long as the window.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from datetime import timedelta
from uuid import UUID

from sqlalchemy import Engine, text

from dps_billing.adapters.billing_platform.pacing import WINDOW_SECONDS, calls_per_window

STALE_AFTER = timedelta(minutes=2)  # a turn of no claim: longer than any call's timeouts and retries' wait
POLL_SECONDS = 0.005
_CLAIM: ContextVar[tuple[UUID, UUID] | None] = ContextVar("billing_pacer_claim", default=None)

_RESERVE = text(
    """
    WITH slot AS (
        INSERT INTO billing_pacer_slots AS s (account_id, next_slot, turns)
        VALUES (:account_id, clock_timestamp() + :interval, 1)
        ON CONFLICT (account_id) DO UPDATE
           SET next_slot = greatest(s.next_slot, clock_timestamp()) + :interval, turns = s.turns + 1
        RETURNING s.next_slot - :interval AS planned, s.turns AS seq
    ), turn AS (
        INSERT INTO billing_pacer_turns (account_id, seq, planned_at, push_id, claim_token)
        SELECT :account_id, seq, planned, :push_id, :claim_token FROM slot
    )
    SELECT seq, extract(epoch FROM planned - clock_timestamp()) AS wait FROM slot
    """
)
# The turns of claims that lost their push (the worker died and its lease ran out; the push was
# finished or given back) are marked ended now; the main query sees the rows as they were before.
_GATE = text(
    """
    WITH abandoned AS (
        UPDATE billing_pacer_turns t SET done_at = clock_timestamp()
         WHERE t.account_id = :account_id AND t.seq <= :last AND t.done_at IS NULL AND t.push_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM billing_pushes p
                            WHERE p.id = t.push_id AND p.claim_token = t.claim_token AND p.status = 'running'
                              AND p.lease_until > clock_timestamp())
        RETURNING t.seq, t.done_at
    )
    SELECT coalesce(bool_or(t.done_at IS NULL AND a.seq IS NULL
                            AND (t.push_id IS NOT NULL OR t.planned_at > clock_timestamp() - :stale)), false) AS running,
           extract(epoch FROM max(coalesce(a.done_at, t.done_at, t.planned_at + :stale))
                              + :window - clock_timestamp()) AS wait
      FROM billing_pacer_turns t LEFT JOIN abandoned a ON a.seq = t.seq
     WHERE t.account_id = :account_id AND t.seq <= :last
    """
)
_END = text(
    """
    WITH ended AS (
        UPDATE billing_pacer_turns SET done_at = clock_timestamp()
         WHERE account_id = :account_id AND seq = :seq
    )
    DELETE FROM billing_pacer_turns
     WHERE account_id = :account_id AND seq < :seq
       AND (done_at < clock_timestamp() - :window OR planned_at < clock_timestamp() - :stale)
    """
)


@contextmanager
def for_claim(push_id: UUID, claim_token: UUID) -> Iterator[None]:
    """The turns taken meanwhile (in this context, and the contexts copied from it) are the claim's:
    they count as ended once the claim has lost its push."""
    bound = _CLAIM.set((push_id, claim_token))
    try:
        yield
    finally:
        _CLAIM.reset(bound)


class PostgresPacer:
    """Implements ``dps_billing.adapters.billing_platform.pacing.Pacer``: at most ``per_second`` calls per account in any
    one-second window."""

    def __init__(self, engine: Engine, per_second: float, *, sleep: Callable[[float], None] = time.sleep):
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._interval = timedelta(seconds=1.0 / per_second)
        self._calls = calls_per_window(per_second)
        self._window = timedelta(seconds=WINDOW_SECONDS)
        self._sleep = sleep

    def wait_turn(self, account_id: str) -> None:
        """A turn for a call that is over when this returns (tests; real calls use ``turn``)."""
        with self.turn(account_id):
            pass

    def turn(self, account_id: str, reserved: Callable[[], None] | None = None) -> AbstractContextManager[None]:
        """Entered when the call may start, left when it ended. ``reserved`` is called once the turn has
        its place in the account's order, before any wait (``dps_billing.services.push_lines``)."""
        return self._turn(account_id, reserved)

    @contextmanager
    def _turn(self, account_id: str, reserved: Callable[[], None] | None) -> Iterator[None]:
        push_id, claim_token = _CLAIM.get() or (None, None)
        with self._engine.connect() as connection:
            row = connection.execute(_RESERVE, {"account_id": account_id, "interval": self._interval,
                                                "push_id": push_id, "claim_token": claim_token}).one()
        seq = int(row.seq)
        try:
            if reserved is not None:
                reserved()
            if row.wait > 0:
                self._sleep(float(row.wait))
            self._gate(account_id, seq)
            yield
        finally:
            with self._engine.connect() as connection:
                connection.execute(_END, {"account_id": account_id, "seq": seq, "window": self._window,
                                          "stale": STALE_AFTER})

    def _gate(self, account_id: str, seq: int) -> None:
        if seq <= self._calls:
            return
        params = {"account_id": account_id, "last": seq - self._calls, "window": self._window, "stale": STALE_AFTER}
        while True:
            with self._engine.connect() as connection:
                gate = connection.execute(_GATE, params).one()
            if gate.running:
                self._sleep(POLL_SECONDS)
                continue
            if gate.wait is not None and gate.wait > 0:
                self._sleep(float(gate.wait))
            return
