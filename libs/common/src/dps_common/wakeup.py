"""The LISTEN/NOTIFY wake-up moved to ``dps_common.work_queue``; this name stays for its callers."""

from dps_common.work_queue.wakeup import Wakeup, notify, wake_on_notify

__all__ = ["Wakeup", "notify", "wake_on_notify"]
