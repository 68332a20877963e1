"""The worker process: claims due deliveries, makes their attempts on a thread pool, records them.

It wakes at once when deliveries become due (PostgreSQL ``NOTIFY`` on the intake's channel, heard
on a connection of its own) and otherwise polls, which also picks up retries whose time has come
and deliveries whose worker died. It claims no more than it has free threads for, so rows it could
not start yet stay free for other workers. SIGTERM or SIGINT: stop claiming, finish the attempts in
flight, record them, exit. The same process runs the event consumer and the retention job.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psycopg

from dps_common.db import Transactions, make_engine

from dps_webhooks.delivery.claims import Claimed, LeaseLost, claim_due, record_outcome
from dps_webhooks.delivery.retention import run_retention
from dps_webhooks.delivery.sender import Sender
from dps_webhooks.delivery.signing import delivery_headers
from dps_webhooks.domain.attempt_outcome import AttemptResult, decide
from dps_webhooks.services.intake import DELIVERIES_CHANNEL
from dps_webhooks.settings import Settings
from dps_webhooks.signing_secrets import SecretSealer

log = logging.getLogger("dps.webhooks.worker")

_LISTEN_RETRY_SECONDS = 1.0
_SIGNAL_CHECK_SECONDS = 0.25  # how soon a signal is noticed while idle


class DeliveryWorker:
    def __init__(self, settings: Settings, tx: Transactions, database_url: str):
        self.settings = settings
        self.stopping = threading.Event()
        self._tx = tx
        self._database_url = database_url  # plain postgresql:// for the LISTEN connection
        self._sender = Sender(settings.attempt_timeout_seconds, settings.allowed_networks, settings.receiver_ca_file)
        self._sealer = SecretSealer(settings.secret_key)
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._saturated = False
        self._signalled = False
        # When busy, claim again once a quarter of the threads are free: one claim per few
        # deliveries instead of one per delivery.
        self._refill_at = max(1, settings.delivery_concurrency // 4)

    def stop(self) -> None:
        self.stopping.set()
        self._wake.set()

    def stop_from_signal(self) -> None:
        # Only a flag: taking the events' locks inside a signal handler can deadlock the main thread.
        self._signalled = True

    def run(self) -> None:
        """Deliver until ``stop()``; returns once the attempts in flight are recorded."""
        capacity = self.settings.delivery_concurrency
        listener = threading.Thread(target=self._listen, name="webhook-listen", daemon=True)
        listener.start()
        with ThreadPoolExecutor(capacity, thread_name_prefix="webhook-attempt") as pool:
            while not self.stopping.is_set():
                if self._signalled:
                    self.stop()
                    break
                self._wake.clear()
                free = capacity - self._in_flight
                claimed = self._claim(free) if free > 0 else []
                with self._lock:
                    self._in_flight += len(claimed)
                    self._saturated = free > 0 and len(claimed) == free  # more may be due
                for delivery in claimed:
                    pool.submit(self._deliver, delivery)
                if self._saturated and capacity - self._in_flight >= self._refill_at:
                    continue
                self._wait(self.settings.poll_interval_seconds)
        listener.join(timeout=5)

    def _wait(self, seconds: float) -> None:
        waited = 0.0
        while waited < seconds and not self._signalled:
            step = min(_SIGNAL_CHECK_SECONDS, seconds - waited)
            if self._wake.wait(step):
                return
            waited += step

    def _claim(self, limit: int) -> list[Claimed]:
        try:
            with self._tx() as session:
                return claim_due(session, limit, self.settings.lease_seconds)
        except Exception:
            log.exception("claim failed")  # the database is away: poll again later
            return []

    def _deliver(self, claimed: Claimed) -> None:
        try:
            result = self._attempt(claimed)
            outcome = decide(
                result,
                claimed.attempt,
                gaps=self.settings.retry_gaps,
                jitter=self.settings.retry_jitter,
                random=random.random,
            )
            try:
                with self._tx() as session:
                    record_outcome(
                        session,
                        claimed,
                        result,
                        outcome,
                        disable_after=self.settings.disable_after_failures,
                        wake_within_seconds=self.settings.poll_interval_seconds,
                    )
            except LeaseLost:
                log.warning("lease lost", extra=_ids(claimed))
                return
            log.info(
                "delivery attempted",
                extra={**_ids(claimed), "status": outcome.status.value, "responseStatus": result.status},
            )
        except Exception:
            # Unrecorded: the claim stays, and the same attempt is made again when its lease ends.
            log.exception("delivery attempt not recorded", extra=_ids(claimed))
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._saturated and self.settings.delivery_concurrency - self._in_flight >= self._refill_at:
                    self._wake.set()

    def _attempt(self, claimed: Claimed) -> AttemptResult:
        secret = self._sealer.open(claimed.endpoint_id, claimed.secret_sealed)
        headers = delivery_headers(
            secret=secret,
            event_id=claimed.event_id,
            delivery_id=claimed.delivery_id,
            attempt=claimed.attempt,
            body=claimed.body,
        )
        return self._sender.send(claimed.url, claimed.body.encode(), headers)

    def _listen(self) -> None:
        """Wake the claim loop on every notification; reconnect when the connection drops."""
        while not self.stopping.is_set():
            try:
                with psycopg.connect(self._database_url, autocommit=True) as connection:
                    connection.execute(f"LISTEN {DELIVERIES_CHANNEL}")
                    self._wake.set()  # anything notified while we were not listening
                    while not self.stopping.is_set():
                        for _notification in connection.notifies(timeout=1.0):
                            self._wake.set()
            except psycopg.Error:
                log.warning("listen connection lost")
                self.stopping.wait(_LISTEN_RETRY_SECONDS)


def _ids(claimed: Claimed) -> dict[str, object]:
    return {
        "deliveryId": str(claimed.delivery_id),
        "eventId": str(claimed.event_id),
        "endpointId": str(claimed.endpoint_id),
        "attempt": claimed.attempt,
    }


def run_worker(settings: Settings, *, consume: bool = True) -> None:
    """The ``dealpricing-webhooks worker`` process: deliveries, events (``consume``) and retention."""
    engine = make_engine(settings.database_url, pool_size=settings.db_pool_size, application_name="dps-webhooks-worker")
    tx = Transactions.for_engine(engine)
    listen_url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    worker = DeliveryWorker(settings, tx, listen_url)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: worker.stop_from_signal())
    failed = threading.Event()
    helpers = [
        _thread(
            "webhook-retention",
            run_retention,
            (tx, settings.retention_days, settings.retention_interval_seconds, worker.stopping),
            worker,
            failed,
        )
    ]
    if consume:
        from dps_webhooks.consumer import EventConsumer

        helpers.append(_thread("webhook-consumer", EventConsumer(settings, tx).run, (worker.stopping,), worker, failed))
    for helper in helpers:
        helper.start()
    log.info("worker started", extra={"concurrency": settings.delivery_concurrency, "consume": consume})
    try:
        worker.run()
    finally:
        worker.stop()
        for helper in helpers:
            helper.join()
        tx.dispose()
    log.info("worker stopped")
    if failed.is_set():
        raise SystemExit(1)  # a part of the worker died: let the supervisor restart the whole


def _thread(
    name: str, target: Callable[..., None], args: tuple, worker: DeliveryWorker, failed: threading.Event
) -> threading.Thread:
    def run() -> None:
        try:
            target(*args)
        except Exception:
            log.exception("worker part failed", extra={"part": name})
            failed.set()
            worker.stop()

    return threading.Thread(target=run, name=name)
