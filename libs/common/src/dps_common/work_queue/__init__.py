"""Work shared by many workers through a database table: claims under a lease with ``FOR UPDATE SKIP
LOCKED`` (``WorkQueue``), and the ``LISTEN``/``NOTIFY`` wake-up when work commits (``Wakeup``,
``wake_on_notify``, ``notify``). The outbox relay, the webhook delivery worker and the billing push
worker are its users."""

from dps_common.work_queue.queue import WorkQueue
from dps_common.work_queue.wakeup import Wakeup, notify, wake_on_notify

__all__ = ["Wakeup", "WorkQueue", "notify", "wake_on_notify"]
