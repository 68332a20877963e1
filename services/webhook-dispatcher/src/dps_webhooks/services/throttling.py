"""An endpoint's ``rateLimitPerSecond``: the delivery workers, however many, send to it no faster.

Called by an attempt thread just before it sends (``workers/deliveries.py``): ``wait_for_turn``
takes the delivery's turn (``domain/throttle.py``, kept in Redis for every worker,
``adapters/throttle.py``) and either waits for it, when it is within the horizon
(``WEBHOOK_THROTTLE_HORIZON_SECONDS``, 2 s), and lets the attempt go, or puts the delivery back and
says not to send. Deliveries wait, they never fail for it: the timeout and the 8 attempts are
unchanged, and a delivery put back has not made an attempt.

Put back: the claim counted an attempt (``db/deliveries.py``: every claim does, before anything is
sent), so its count goes back down, its claim is given up and it is due again shortly before its
turn, when any worker claims it and its ticket is its turn (claimed a little late, up to the
horizon after it, it goes at once: ``domain/throttle.py``). Guarded by the claim's token: a claim
already lost (its lease ran out and another worker took the delivery over) changes nothing. A
delivery held meanwhile (its endpoint paused) stays held. This is the one write an attempt thread
makes: one statement by primary key, so that a thread never sleeps through its lease.

When the store cannot answer, the delivery is put back for ``STORE_DOWN_RETRY_SECONDS`` unsent: the
receiver declared what it can take, and sending unchecked, or each worker counting alone, would
multiply that by the number of workers, while waiting costs only time (no attempt counted, nothing
lost). Endpoints without a limit never ask the store and are not affected. The outage is logged once
when it starts and once when it ends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from uuid import UUID

from sqlalchemy import Update, case, func, update

from dps_common.db import Transactions

from dps_webhooks.adapters.throttle import Turns, open_turns
from dps_webhooks.db.models import WebhookDelivery as Delivery
from dps_webhooks.domain.claims import Claimed
from dps_webhooks.domain.throttle import come_back_in_us
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.throttle")

STORE_DOWN_RETRY_SECONDS = 5.0  # a delivery of a limited endpoint waits this long while the store is away


class Throttle:
    def __init__(self, turns: Turns, tx: Transactions, horizon_seconds: float,
                 *, sleep: Callable[[float], object] = time.sleep):
        self._turns = turns
        self._tx = tx
        self._horizon_us = int(horizon_seconds * 1_000_000)
        self._sleep = sleep
        self._lock = threading.Lock()
        self._store_down = False

    @classmethod
    def for_settings(cls, settings: Settings, tx: Transactions) -> Throttle:
        """The worker's throttle: the turns in REDIS_URL's store (``memory://``: this process's)."""
        limits = settings.rate_limits
        turns = open_turns(limits.storage_url, limits.key_prefix, limits.store_timeout_seconds)
        if not turns.shared:
            log.warning("no REDIS_URL: endpoints' rateLimitPerSecond are kept per worker process (memory://), "
                        "so several workers together may exceed them")
        return cls(turns, tx, settings.throttle_horizon)

    def wait_for_turn(self, claimed: Claimed) -> bool:
        """Whether to send now: True at once without a limit, or once the delivery's turn has come;
        False when it was put back for later (nothing to record: it made no attempt)."""
        rate = claimed.rate_limit_per_second
        if rate is None:
            return True
        try:
            turn = self._turns.take(claimed.endpoint_id, claimed.delivery_id, rate, self._horizon_us)
        except self._turns.errors as error:
            self._store_failed(error)
            self._put_back(claimed, STORE_DOWN_RETRY_SECONDS)
            return False
        self._store_answered()
        if turn.now:
            if turn.wait_us > 0:
                self._sleep(turn.wait_us / 1_000_000)
            return self._start(claimed, rate)
        self._put_back(claimed, come_back_in_us(turn.wait_us, self._horizon_us) / 1_000_000)
        return False

    def _start(self, claimed: Claimed, rate: int) -> bool:
        """At its turn: no sooner than a spacing after the last send started (``domain/throttle.py``:
        a thread that woke late must not crowd the next). The waits are short: a spacing at most,
        unless many sends woke late together."""
        try:
            while (wait_us := self._turns.start(claimed.endpoint_id, rate)) > 0:
                self._sleep(wait_us / 1_000_000)
        except self._turns.errors as error:
            self._store_failed(error)
            self._put_back(claimed, STORE_DOWN_RETRY_SECONDS)
            return False
        return True

    def _put_back(self, claimed: Claimed, in_seconds: float) -> None:
        try:
            with self._tx() as session:
                session.execute(put_back(claimed.delivery_id, claimed.token, in_seconds))
        except Exception as error:  # the database is away: the lease brings the delivery back
            log.warning("delivery not put back for its turn: it is attempted after its lease",
                        extra={**claimed.log_fields(), "error": type(error).__name__})

    def _store_failed(self, error: BaseException) -> None:
        with self._lock:
            first, self._store_down = not self._store_down, True
        if first:
            log.warning("throttle store unavailable: deliveries to endpoints with a rateLimitPerSecond wait until it is back",
                        extra={"error": type(error).__name__, "retryInSeconds": STORE_DOWN_RETRY_SECONDS})

    def _store_answered(self) -> None:
        if not self._store_down:  # read without the lock: the common case costs nothing
            return
        with self._lock:
            recovered, self._store_down = self._store_down, False
        if recovered:
            log.info("throttle store available again")


def put_back(delivery_id: UUID, token: UUID, in_seconds: float) -> Update:
    """The claim undone: the attempt it counted, its token; due in ``in_seconds`` (held stays held)."""
    return (
        update(Delivery)
        .where(Delivery.id == delivery_id, Delivery.claim_token == token)
        .values(
            attempt_count=Delivery.attempt_count - 1,
            claim_token=None,
            next_attempt_at=case(
                (Delivery.next_attempt_at.is_(None), None),
                else_=func.now() + timedelta(seconds=in_seconds),
            ),
        )
    )
