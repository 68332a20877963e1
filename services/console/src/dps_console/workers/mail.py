"""The sign-in mail worker (``dealpricing-console worker``): its loop, which sends the sign-in mails
the pages queue (``dps_console.composition.build_mail_worker`` puts it together).

Run one or more, anywhere (requests are shared through the database). A queued request wakes it at
once (``LISTEN`` on the queue's channel); the poll stays as the fallback and brings retries due.
SIGTERM or SIGINT: it finishes the mail in hand and stops. With ``CONSOLE_WORKER_METRICS_PORT`` it
serves ``/healthz`` (alive while its loop turns) and ``/metrics``."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable

from dps_common.process_server import Heartbeat, serve_health_and_metrics
from dps_common.work_queue import wake_on_notify

from dps_console.services.sign_in_mail import BATCH, REQUESTS, SignInMail
from dps_console.settings import Settings

log = logging.getLogger("dps.console.worker")
POLL_SECONDS = 1.0


class MailWorker:
    def __init__(self, settings: Settings, mail: SignInMail, *, close: Callable[[], None] = lambda: None,
                 poll_seconds: float = POLL_SECONDS):
        self._settings = settings
        self._mail = mail
        self._close = close  # the database connections, once stopped
        self._poll = poll_seconds
        self.stopping = threading.Event()
        self._wake = threading.Event()
        self.heartbeat = Heartbeat("sign-in mail loop", poll_seconds)

    def stop(self) -> None:
        self.stopping.set()
        self._wake.set()

    def serve(self) -> None:
        """The process: runs until SIGTERM or SIGINT, with its health and metrics server when configured."""

        def on_signal(signum: int, _frame: object) -> None:
            log.info("worker stopping", extra={"signal": signum})
            self.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        settings = self._settings
        log.info("console mail worker started")
        with serve_health_and_metrics(settings.worker_metrics_host, settings.worker_metrics_port, self.heartbeat.stalled):
            self.run()
        self._close()
        log.info("console mail worker stopped")

    def run(self) -> None:
        wakeup = REQUESTS.wakeup(self._settings.database_url, "dps-console-worker-listen")
        listener = wake_on_notify(wakeup, self._wake, self.stopping)
        while not self.stopping.is_set():
            self.heartbeat.beat()
            worked = 0
            try:
                worked = self._mail.send_due()
            except Exception:  # the database is away for a moment: try again at the next poll
                log.exception("sign-in mail claim failed")
            if worked == BATCH:
                continue  # more may be waiting
            self._wake.wait(self._poll)
            self._wake.clear()
        listener.join()

