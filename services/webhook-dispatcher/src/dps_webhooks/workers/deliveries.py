"""The delivery worker: claims due deliveries, makes their attempts on a thread pool, records them.

It wakes at once when deliveries become due (PostgreSQL ``NOTIFY`` on the work queue's channel,
heard on a connection of its own by ``dps_common.work_queue.wake_on_notify``), and otherwise when the
next delivery falls due: a claim that took fewer than it could also reads when that is (a retry, a
delivery put back for its throttle turn, a recovery's spread, a dead worker's lease), and the loop
sleeps until then. ``WEBHOOK_POLL_INTERVAL_SECONDS`` (30 s) is only the safety net under both (a
notification lost with its connection, a due time another process wrote without one). It claims no more than it has free threads for, so rows it
could not start yet stay free for other workers. ``stop()`` (the process's SIGTERM or SIGINT): stop
claiming, finish the attempts in flight, record them, return. The process around it (the event
consumers, the retention loop, ``/healthz`` and ``/metrics``) is put together by
``dps_webhooks.composition.build_worker``. An attempt is made by the signed sender
(``adapters/signing.py``); the results and the next claim share one transaction
(``services/attempts.py``, which also writes each attempt's log line, with its ``requestId``).

It is the consumer's ``HandOver`` (``services/hand_over.py``): the consumer in the same process
stores new deliveries already claimed for it (``take_on``) and hands them over (``start``), so they
cost no claim statement and wake nobody. It may take on up to four rounds of its threads (the rest
wait in the pool's queue, briefly for receivers that answer at once), fewer when the lease is short;
beyond that, deliveries are stored due and any worker claims them. Its attempt slots (``Slots``)
count the loop's claims and the consumer's hand-overs together.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from dps_common import request_id
from dps_common.db import Transactions
from dps_common.db_retry import OutageLog
from dps_common.process_server import Heartbeat
from dps_common.work_queue import wake_on_notify

from dps_webhooks.adapters import metrics
from dps_webhooks.adapters.signing import SignedSender
from dps_webhooks.domain.attempt_outcome import decide
from dps_webhooks.domain.claims import Claimed
from dps_webhooks.services.attempts import Attempts, Claims
from dps_webhooks.services.recording import Finished, interrupted_last
from dps_webhooks.services.throttling import Throttle
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.worker")

_SIGNAL_CHECK_SECONDS = 0.5  # how soon a signal is noticed while idle (a wake-up each)
HAND_OVER_WAIT_SECONDS = 0.1  # how long the consumer waits for room in its own worker
RECORD_BATCH = 64  # results waiting to be recorded that are recorded at once, lingering or not


class DeliveryWorker:
    """The delivery loop and its attempt threads; the ``HandOver`` of its process's consumer."""

    def __init__(self, settings: Settings, tx: Transactions, database_url: str, throttle: Throttle | None = None):
        self.settings = settings
        self.stopping = threading.Event()
        self._database_url = database_url  # for the LISTEN connection
        self._sender = SignedSender(settings)
        self._attempts = Attempts(settings, tx)
        self._throttle = throttle or Throttle.for_settings(settings, tx)  # endpoints' rateLimitPerSecond
        self._wake = threading.Event()  # a result is ready, deliveries were notified, or stop
        self._notified = threading.Event()  # deliveries became due (NOTIFY)
        # results of the attempt threads not yet taken by the loop; an attempt that ends wakes the loop
        # only when it must act (see _wake_for_result), not once per attempt
        self._results_lock = threading.Lock()
        self._results: list[_Done] = []
        self._loop_lingers = False  # the loop holds results it records by its linger's end anyway
        self._slots = Slots()  # claimed or handed over and not yet recorded: the loop's and the consumer's
        self._pool = ThreadPoolExecutor(settings.delivery_concurrency, thread_name_prefix="webhook-attempt")
        self._saturated = False
        self._signalled = False
        self._room_comes_in_time = True  # whether waiting for room to hand over is worth it (consumer's)
        # the process's liveness: the loop beats at every turn and while it waits (each signal check)
        self.heartbeat = Heartbeat("delivery loop", _SIGNAL_CHECK_SECONDS)
        self._database = OutageLog(log, "delivery loop")  # an outage: one line when it starts, one when it ends
        # When busy, claim again once a quarter of the threads are free: one claim per few
        # deliveries instead of one per delivery.
        self._refill_at = max(1, settings.delivery_concurrency // 4)
        # What the consumer may hand over, running and queued: up to 4 rounds of the threads (a full
        # prefetch), fewer when the lease is short, so the last one queued still ends within its lease.
        rounds = math.ceil(settings.lease_seconds / settings.attempt_timeout_seconds) - 1
        self._hand_over_limit = max(1, min(4, rounds)) * settings.delivery_concurrency

    @property
    def in_flight(self) -> int:
        """Attempts being made now (not those waiting for a thread, nor reservations for a claim)."""
        return self._slots.running

    def stop(self) -> None:
        self.stopping.set()
        self._wake.set()

    def stop_from_signal(self) -> None:
        # Only a flag: taking the events' locks inside a signal handler can deadlock the main thread.
        self._signalled = True

    def run(self) -> None:
        """Deliver until ``stop()``; returns once the attempts in flight are recorded.

        Attempt threads never touch the database: they queue their results, and this loop records
        the results in one transaction, together with the next claim when threads are free. A
        result waits up to ``WEBHOOK_RECORD_LINGER_SECONDS`` (0.2 s) for others before it is
        recorded (at once when a claim is made anyway, or when ``RECORD_BATCH`` are waiting): the
        receiver has it already, so at a steady rate many outcomes share one commit instead of one
        each. Its thread is free meanwhile. A worker that dies before recording leaves the claims,
        and their deliveries are attempted again after their leases, as for an attempt in flight
        (as the next attempt: every claim counts one, ``db/deliveries.py``).

        When the database is away, the results stay pending and the loop backs off (0.5 s doubling
        to 15 s), logging the outage once when it starts and once when it ends; then it records them
        with its next claim.
        """
        capacity = self.settings.delivery_concurrency
        listener = wake_on_notify(self._attempts.wakeup(self._database_url), self._due, self.stopping)
        next_poll = 0.0
        pending: list[_Done] = []  # results taken from the threads, not yet recorded
        record_by = math.inf  # when the oldest of them is recorded at the latest
        retry_at = 0.0  # while the database is away: no transaction before then (the backoff)
        while not self.stopping.is_set():
            self.heartbeat.beat()
            if self._signalled:
                self.stop()
                break
            self._wake.clear()
            done = self._take_finished()
            if done and not pending:
                record_by = time.monotonic() + self.settings.record_linger_seconds
            pending += done
            free = capacity - self._slots.taken
            ready = time.monotonic() >= retry_at
            if not ready:
                claim = False
            elif self._saturated:  # more is known to be due: claim once enough threads are free
                claim = free >= self._refill_at
            else:
                claim = free > 0 and (self._notified.is_set() or time.monotonic() >= next_poll)
            record = ready and bool(pending) and (claim or len(pending) >= RECORD_BATCH or time.monotonic() >= record_by)
            if claim or record:
                limit = self._slots.take(free, capacity) if claim else 0
                if limit > 0:  # (none: the consumer took the room meanwhile, and the claim is still owed)
                    self._notified.clear()
                try:
                    claims = self._record_and_claim(pending, limit)
                except Exception as error:  # a lost connection (Attempts handles the rest)
                    self._slots.give_back(limit)
                    self._saturated = False
                    retry_at = time.monotonic() + self._database.failed(error)  # logged once per outage
                    next_poll = retry_at  # the results stay pending, recorded with the next claim
                    record_by = retry_at if pending else math.inf
                    self._wait(retry_at - time.monotonic())
                    continue
                self._database.succeeded()
                pending, record_by = [], math.inf
                claimed = claims.claimed
                self._slots.give_back(limit - len(claimed))
                if claim:
                    self._saturated = limit > 0 and len(claimed) == limit
                if limit > 0:
                    next_poll = time.monotonic() + self._next_look(claims)
                self.start(claimed)
            if self._saturated and capacity - self._slots.taken >= self._refill_at:
                continue
            # A claim owed (saturated, notified or its time come) with too few threads free: each
            # result that comes in wakes the loop, which claims once there is room.
            claim_owed = self._saturated or self._notified.is_set() or time.monotonic() >= next_poll
            with self._results_lock:
                unseen = bool(self._results)
                self._loop_lingers = bool(pending) and not claim_owed
            if unseen and not pending:  # ended since the loop looked, and no linger's end will take them
                continue
            # never longer than the safety poll: room given back with no result (a failed hand-over)
            # still comes to a claim owed
            poll = self.settings.poll_interval_seconds
            until = (record_by if claim_owed else min(next_poll, record_by)) - time.monotonic()
            self._wait(min(until, poll) if until > 0 else poll)
        self._finish_in_flight(pending)
        listener.join(timeout=5)

    def _next_look(self, claims: Claims) -> float:
        """Seconds until the loop claims again unless notified: when the next delivery falls due,
        and at the latest after the safety poll."""
        poll = self.settings.poll_interval_seconds
        return poll if claims.next_due_in is None else max(0.0, min(poll, claims.next_due_in))

    def wait_for_room(self, count: int) -> None:
        """For the consumer, before it stores a batch of ``count`` events: wait (briefly) for room to
        take them on. A burst is then handed over as threads free up, instead of being stored for
        claiming because this worker was full for a moment (which wakes and busies every worker).
        When attempts are slow the wait times out, and the consumer stops waiting until this worker
        has room again: every batch meanwhile is stored at once, due for any worker, so a worker
        held up by slow receivers never slows the intake down to one batch per wait."""
        timeout = HAND_OVER_WAIT_SECONDS if self._room_comes_in_time else 0.0
        self._room_comes_in_time = self._slots.wait_for_room(count, self._hand_over_limit, timeout)

    def take_on(self, count: int) -> int:
        """For the consumer: reserve up to ``count`` attempts of deliveries it is about to store
        already claimed for this worker; how many it may. ``give_back`` what it did not store."""
        return self._slots.take(count, self._hand_over_limit)

    def give_back(self, count: int) -> None:
        self._slots.give_back(count)
        self._wake.set()  # room again: a claim may be owed

    def start(self, claimed: list[Claimed]) -> None:
        """Make the attempts of deliveries claimed for this worker (by its loop or its consumer)."""
        for index, delivery in enumerate(claimed):
            try:
                self._pool.submit(self._deliver, delivery)
            except RuntimeError:  # the pool is shutting down: the leases bring these back later
                self._slots.give_back(len(claimed) - index)
                log.warning("attempts not started: the worker is stopping", extra={"count": len(claimed) - index})
                return

    def _finish_in_flight(self, pending: list[_Done]) -> None:
        """No new attempts; ``pending`` and the ones in flight (and any the consumer is handing over)
        end and are recorded before the worker goes. Not longer than a lease: by then any that were
        never started (their consumer failed between its commit and ``start``) are other workers'
        again, and results the database did not take (it is away) are attempted again by them."""
        self._slots.close()
        give_up_at = time.monotonic() + self.settings.lease_seconds
        while True:
            pending += self._take_finished()
            if pending:
                try:
                    self._record_and_claim(pending, 0)
                    self._database.succeeded()
                    pending = []
                except Exception as error:  # a lost connection: try again in a moment
                    self._database.failed(error)
            # an attempt hands in its result before it gives its slot back: none taken, none unseen
            if self._slots.taken == 0 and not pending and not self._results:
                break
            self.heartbeat.beat()
            if time.monotonic() > give_up_at:
                log.warning("stopping with attempts unrecorded", extra={"count": self._slots.taken + len(pending)})
                break
            self._wake.wait(_SIGNAL_CHECK_SECONDS)
            self._wake.clear()
        self._pool.shutdown()

    def _wait(self, seconds: float) -> None:
        waited = 0.0
        while waited < seconds and not self._signalled:
            step = min(_SIGNAL_CHECK_SECONDS, seconds - waited)
            if self._wake.wait(step):
                return
            waited += step
            self.heartbeat.beat()

    def _take_finished(self) -> list[_Done]:
        with self._results_lock:
            done, self._results = self._results, []
        return done

    def _hand_in(self, done: _Done) -> None:
        """On an attempt thread: the result to the loop, the slot given back, and the loop woken only
        when it must act: no linger of its own will take the result (its first since the loop
        recorded), it waits for free threads to claim more, enough results wait for a batch, or it
        is stopping. At a steady rate most results wait for the linger's end without a wake-up each."""
        with self._results_lock:
            self._results.append(done)
            wake = (not self._loop_lingers or self._saturated or len(self._results) >= RECORD_BATCH
                    or self.stopping.is_set())
        self._slots.finish(1)
        if wake:
            self._wake.set()

    def _record_and_claim(self, done: list[_Done], limit: int) -> Claims:
        """One transaction (``services/attempts.py``): the results that are ready, then a claim of up
        to ``limit`` deliveries."""
        return self._attempts.record_and_claim([item.finished for item in done if item.finished is not None], limit)

    def _deliver(self, claimed: Claimed) -> None:
        """On an attempt thread: the attempt and its outcome, handed to the loop to record. The
        event's request id is bound meanwhile: every line the attempt writes carries it."""
        with request_id.bound(claimed.request_id):
            self._deliver_bound(claimed)

    def _deliver_bound(self, claimed: Claimed) -> None:
        finished = interrupted_last(claimed, self.settings.max_attempts)  # no ninth attempt
        self._slots.start(1)
        try:
            if finished is not None:
                return  # nothing to send: recorded as it is (finally)
            if not self._throttle.wait_for_turn(claimed):
                # put back until its turn (services/throttling.py): no attempt made, nothing to record;
                # the loop claims at once, which tells it when the delivery is due again
                self._due()
                return
            result = self._sender.send(claimed)
            metrics.ATTEMPT_SECONDS.observe(result.duration_ms / 1000)
            outcome = decide(
                result,
                claimed.attempt,
                gaps=self.settings.retry_gaps,
                jitter=self.settings.retry_jitter,
                random=random.random,
            )
            finished = Finished(claimed, result, outcome)
        except Exception:
            # Unrecorded: the claim stays, and the next attempt is made when its lease ends.
            log.exception("delivery attempt not recorded", extra=claimed.log_fields())
        finally:
            self._hand_in(_Done(finished))

    def _due(self) -> None:
        self._notified.set()
        self._wake.set()


@dataclass(frozen=True)
class _Done:
    finished: Finished | None  # None: the attempt failed unexpectedly and is not recorded


class Slots:
    """Attempts taken on and not yet recorded, counted for the loop and the consumer together."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._taken = 0  # reserved (for a claim or a hand-over) or started, and not yet done
        self._running = 0  # being attempted (on a thread) and not yet done
        self._closed = False

    @property
    def taken(self) -> int:
        return self._taken

    def take(self, wanted: int, up_to: int) -> int:
        """Take at most ``wanted`` while no more than ``up_to`` are taken in all; how many were."""
        with self._changed:
            granted = 0 if self._closed else max(0, min(wanted, up_to - self._taken))
            self._taken += granted
            return granted

    @property
    def running(self) -> int:
        return self._running

    def give_back(self, count: int) -> None:
        """Reserved and not started after all."""
        with self._changed:
            self._taken -= count
            self._changed.notify_all()

    def start(self, count: int) -> None:
        with self._changed:
            self._running += count

    def finish(self, count: int) -> None:
        """Started, and now done."""
        with self._changed:
            self._taken -= count
            self._running -= count
            self._changed.notify_all()

    def wait_for_room(self, count: int, up_to: int, timeout: float) -> bool:
        """Until ``count`` could be taken under ``up_to``, at most ``timeout`` seconds; whether there
        is room (or nothing more will be taken on)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._closed or up_to - self._taken >= min(count, up_to), timeout)

    def close(self) -> None:
        """Stopping: nothing more is taken on."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
