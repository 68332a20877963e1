"""A lost database connection: told apart from other errors, retried once when nothing was done,
otherwise answered ``DatabaseUnavailable`` (503 with Retry-After), never an unhandled error.

A pooled connection can die at any moment (the server restarted, an operator or a proxy ended it):
the pool's check at checkout (``dps_common.db``) catches those that died while idle, but one that
dies between that check and its first statement fails the statement. ``run_retrying(call)`` runs a
use case (an HTTP responder, a worker's step) and, when it failed that way, runs it once more on a
fresh connection, provided nothing it did can have been committed:

- the transaction that failed had not completed a statement (it failed at checkout, at ``BEGIN`` or
  at its first statement), or it was a read (``Transactions.read``/``read_cursor``, which write
  nothing);
- no transaction of this run committed before it.

A transaction that may have committed (its commit failed, or it failed after a statement succeeded)
is never retried: the caller gets ``DatabaseUnavailable`` and may retry itself (with its
Idempotency-Key). Work outside the database that the use case did before its first transaction (a
call to another service) is done again by the retry: the services' responders make only reads and
idempotent calls there.

``dps_common.db.Transactions`` reports each transaction's end here (``transaction_failed``,
``transaction_committed``); a use case run outside ``run_retrying`` is simply not retried.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import psycopg
from sqlalchemy import exc as sa_exc

from dps_common.errors import DatabaseUnavailable

log = logging.getLogger("dps.db")
T = TypeVar("T")

UNAVAILABLE_MESSAGE = "database unavailable"  # constant: one line to count and alert on
AVAILABLE_AGAIN_MESSAGE = "database available again"  # the end of an outage (``OutageLog``)
# SQLSTATEs of a server that is going away or refusing connections: class 08 (connection exception),
# admin/crash shutdown, cannot connect now, too many connections
_UNAVAILABLE_STATES = ("57P01", "57P02", "57P03", "53300")
# SQLAlchemy's pool, when the connections it opened in place of a closed one were closed too, three
# times in a row (the server ends every new session at once): its message, raised without a cause
_CHECKOUT_EXHAUSTED = "This connection is closed"


def is_connection_lost(error: BaseException) -> bool:
    """The database could not be reached, or the connection broke: nothing about the request itself."""
    if isinstance(error, DatabaseUnavailable):
        return True
    if isinstance(error, sa_exc.TimeoutError):  # every pooled connection in use for pool_timeout
        return True
    if isinstance(error, sa_exc.InvalidRequestError) and str(error) == _CHECKOUT_EXHAUSTED:
        return True
    if isinstance(error, sa_exc.DBAPIError):
        if error.connection_invalidated:  # SQLAlchemy's own disconnect detection (is_disconnect)
            return True
        error = error.orig if error.orig is not None else error
    if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        state = getattr(error, "sqlstate", None)
        return state is None or state.startswith("08") or state in _UNAVAILABLE_STATES
    return False


@dataclass
class _Run:
    committed: bool = False  # a transaction of this run committed (or may have)
    retryable: bool = False  # the last failure was a lost connection before anything was done


_run: ContextVar[_Run | None] = ContextVar("dps_db_run", default=None)


def transaction_failed(error: BaseException, *, started: bool) -> None:
    """A transaction ended with ``error``; ``started``: a statement of it had completed (a write
    transaction's failure may then follow a commit the server made)."""
    run = _run.get()
    if run is not None:
        run.retryable = is_connection_lost(error) and not started and not run.committed


def transaction_committed() -> None:
    run = _run.get()
    if run is not None:
        run.committed = True
        run.retryable = False


def run_retrying(call: Callable[[], T]) -> T:
    """``call()``, once more when a lost connection failed it before anything was done; a lost
    connection is raised as ``DatabaseUnavailable``. Nested runs leave the retry to the outermost."""
    if _run.get() is not None:
        return call()
    run = _Run()
    token = _run.set(run)
    try:
        try:
            return call()
        except Exception as error:
            if not (run.retryable and is_connection_lost(error)):
                raise unavailable(error) if is_connection_lost(error) else error
            log.info("database connection lost; retried on a fresh connection", extra={"error": type(error).__name__})
        _run.set(_Run())
        try:
            return call()
        except Exception as error:
            raise unavailable(error) if is_connection_lost(error) else error
    finally:
        _run.reset(token)


def unavailable(error: BaseException) -> DatabaseUnavailable:
    """``error`` (a lost connection) as the client's answer, logged with a constant message."""
    if isinstance(error, DatabaseUnavailable):
        return error
    log.warning(UNAVAILABLE_MESSAGE, extra={"error": type(error).__name__})
    answer = DatabaseUnavailable()
    answer.__cause__ = error
    return answer


class OutageLog:
    """A loop's view of the database: the first failure of an outage is logged (a warning, without
    the error's text), the ones after it are not, and the recovery is logged once. ``failed`` gives
    the pause before the next try (0.5 s doubling to 15 s, scaled by a random factor in [0.5, 1] so a
    fleet does not reconnect in lockstep), for a loop that does not back off on its own."""

    INITIAL_PAUSE_SECONDS = 0.5
    MAXIMUM_PAUSE_SECONDS = 15.0

    def __init__(self, logger: logging.Logger, what: str):
        self._log = logger
        self._what = what
        self.failing = False
        self._failures = 0

    def failed(self, error: BaseException) -> float:
        """Note a failure; the seconds to wait before the next try."""
        if not self.failing:
            self._log.warning(UNAVAILABLE_MESSAGE, extra={"part": self._what, "error": type(error).__name__})
        self.failing = True
        pause = min(self.MAXIMUM_PAUSE_SECONDS, self.INITIAL_PAUSE_SECONDS * 2.0**self._failures)
        self._failures = min(self._failures + 1, 32)
        return pause * random.uniform(0.5, 1.0)

    def succeeded(self) -> None:
        if self.failing:
            self._log.info(AVAILABLE_AGAIN_MESSAGE, extra={"part": self._what})
        self.failing = False
        self._failures = 0
