"""The push worker (``dealpricing-billing worker``): its loop, which claims pushes and runs them, a few
at a time (``dps_billing.composition.build_push_worker`` puts it together).

Run as many as you like, on as many replicas: pushes are shared through the database (claims with
``FOR UPDATE SKIP LOCKED`` under a renewed lease), and so is the per-account call rate (the pacer's
rows). It claims no more pushes than it has free threads for, so the rest stay free for other
workers. SIGTERM or SIGINT: no new claims; pushes in flight stop before their next call and are
given back, queued, for any worker to resume from the ids already stored. With
``BILLING_WORKER_METRICS_PORT`` it serves ``/healthz`` (alive while its claim loop turns) and
``/metrics``.

A queued push wakes the workers at once: they ``LISTEN`` on the queue's channel (``PushQueue.wakeup``)
and claim as soon as the request commits. The poll stays as the fallback (a lost notification, a
retry's delay ending) and also paces claims while every thread is busy. When the database is away,
the loop logs it once (``dps_common.db_retry.OutageLog``), backs off (0.5 s doubling to 15 s) and
claims again once it is back, logging that once too.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from dps_common.db_retry import OutageLog, is_connection_lost
from dps_common.process_server import Heartbeat, worker_process
from dps_common.work_queue import wake_on_notify

from dps_billing.domain.claimed_push import ClaimedPush
from dps_billing.services.push_queue import PushQueue
from dps_billing.services.push_run import PushRunner
from dps_billing.settings import Settings

log = logging.getLogger("dps.billing.worker")


class PushWorker:
    def __init__(self, settings: Settings, queue: PushQueue, runner: PushRunner):
        self.settings = settings
        self.stopping = runner.stopping
        self._queue = queue
        self._runner = runner
        self._pool = ThreadPoolExecutor(settings.push_concurrency, thread_name_prefix="billing-push")
        self._running: set[Future[None]] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.heartbeat = Heartbeat("push claim loop", settings.push_poll_interval_seconds)

    def stop(self) -> None:
        self.stopping.set()
        self._wake.set()

    def serve(self) -> None:
        """The process: runs until SIGTERM or SIGINT, with its health and metrics server when configured."""
        settings = self.settings
        with worker_process("billing worker", log, self.stop, settings.worker_metrics_host,
                            settings.worker_metrics_port, self.heartbeat.stalled,
                            concurrency=settings.push_concurrency):
            self.run()

    def run(self) -> None:
        capacity = self.settings.push_concurrency
        listener = wake_on_notify(self._queue.wakeup(), self._wake, self.stopping)
        database = OutageLog(log, "push claim loop")
        while not self.stopping.is_set():
            self.heartbeat.beat()
            with self._lock:
                free = capacity - len(self._running)
            claimed = []
            if free > 0:
                try:
                    claimed = self._queue.claim(free)
                    database.succeeded()
                except Exception as error:
                    if is_connection_lost(error):  # an outage: one line when it starts, then back off
                        self.stopping.wait(database.failed(error))
                        continue
                    log.exception("push claim failed")  # a surprise: try again at the next poll
            for push in claimed:
                log.info("push claimed", extra=_ids(push) | {"claims": push.claims})
                future = self._pool.submit(self._runner.run, push)
                with self._lock:
                    self._running.add(future)
                future.add_done_callback(partial(self._done, push=push))
            if claimed and len(claimed) == free:
                continue  # more may be waiting: claim again once threads free up
            self._wake.wait(self.settings.push_poll_interval_seconds)
            self._wake.clear()
        self._pool.shutdown(wait=True)
        listener.join()

    def _done(self, future: Future[None], *, push: ClaimedPush) -> None:
        with self._lock:
            self._running.discard(future)
        error = future.exception()
        if error is not None and is_connection_lost(error):  # the claim loop logs the outage; the lease brings it back
            log.warning("push run lost its database", extra={**_ids(push), "error": type(error).__name__})
        elif error is not None:
            log.error("push run crashed", exc_info=error, extra=_ids(push))
        self._wake.set()


def _ids(push: ClaimedPush) -> dict[str, object]:
    """The push, and the request that queued it: the loop's lines are about many pushes, so each names
    its own (the runner binds it for the lines written while the push runs)."""
    ids: dict[str, object] = {"pushId": str(push.push_id)}
    if push.request_id is not None:
        ids["requestId"] = push.request_id
    return ids
