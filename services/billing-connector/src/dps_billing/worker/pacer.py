"""The platform's ``Pacer`` on PostgreSQL: one row per account holds its next free call slot, so every
worker of every replica shares one rate per account.

Taking a turn is one statement: the slot is moved one interval past the later of itself and the
database's clock, and the caller sleeps until the slot it took. Times come from the database clock
only (no clock skew between replicas); the row is locked for the statement alone, never across the
sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import Engine, text

_TAKE_TURN = text(
    """
    INSERT INTO billing_pacer_slots AS s (account_id, next_slot)
    VALUES (:account_id, clock_timestamp() + :interval)
    ON CONFLICT (account_id) DO UPDATE
       SET next_slot = greatest(s.next_slot, clock_timestamp()) + :interval
    RETURNING extract(epoch FROM (s.next_slot - :interval) - clock_timestamp())
    """
)


class PostgresPacer:
    """Implements ``dps_billing.platform.pacing.Pacer``: at most ``per_second`` calls per account."""

    def __init__(self, engine: Engine, per_second: float, *, sleep: Callable[[float], None] = time.sleep):
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._interval = timedelta(seconds=1.0 / per_second)
        self._sleep = sleep

    def wait_turn(self, account_id: str) -> None:
        self.take_turn(account_id, lambda: None)

    def take_turn(self, account_id: str, reserved: Callable[[], None]) -> None:
        """``wait_turn``, calling ``reserved`` once the turn is taken and before sleeping until it, so that
        callers can take their turns in an order of their own (``dps_billing.worker.lines``)."""
        with self._engine.connect() as connection:
            wait = connection.execute(_TAKE_TURN, {"account_id": account_id, "interval": self._interval}).scalar_one()
        reserved()
        if wait > 0:
            self._sleep(float(wait))
