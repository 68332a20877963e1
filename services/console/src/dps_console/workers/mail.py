"""The sign-in mail worker (``dealpricing-console worker``): its loop, which sends the sign-in mails
the pages queue (``dps_console.composition.build_mail_worker`` puts it together).

Run one or more, anywhere (requests are shared through the database). A queued request wakes it at
once (``LISTEN`` on the queue's channel); the poll stays as the fallback and brings retries due.
When the database is away, it logs that once (``dps_common.db_retry.OutageLog``), backs off (0.5 s
doubling to 15 s) and goes on once it is back, logging that once too.
SIGTERM or SIGINT: it finishes the mail in hand and stops. With ``CONSOLE_WORKER_METRICS_PORT`` it
serves ``/healthz`` (alive while its loop turns) and ``/metrics``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from dps_common.db_retry import OutageLog, is_connection_lost
from dps_common.process_server import Heartbeat, worker_process
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
        settings = self._settings
        with worker_process("console mail worker", log, self.stop, settings.worker_metrics_host,
                            settings.worker_metrics_port, self.heartbeat.stalled):
            self.run()
            self._close()

    def run(self) -> None:
        wakeup = REQUESTS.wakeup(self._settings.database_url, "dps-console-worker-listen")
        listener = wake_on_notify(wakeup, self._wake, self.stopping)
        database = OutageLog(log, "sign-in mail loop")
        while not self.stopping.is_set():
            self.heartbeat.beat()
            worked = 0
            try:
                worked = self._mail.send_due()
                database.succeeded()
            except Exception as error:
                if is_connection_lost(error):  # an outage: one line when it starts, then back off
                    self.stopping.wait(database.failed(error))
                    continue
                log.exception("sign-in mail claim failed")  # a surprise: try again at the next poll
            if worked == BATCH:
                continue  # more may be waiting
            self._wake.wait(self._poll)
            self._wake.clear()
        listener.join()

