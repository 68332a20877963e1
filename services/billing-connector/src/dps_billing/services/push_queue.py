"""The push work queue as the worker loop sees it: claim as many pushes as it has free threads for (one
transaction, ``dps_billing.db.push_claims``), and the wakeup that tells it a push was queued (``LISTEN``
on the queue's channel: a request notifies it at commit)."""

from __future__ import annotations

from dps_common.db import Transactions
from dps_common.work_queue import Wakeup

from dps_billing.db.push_claims import PUSHES, claim_pushes
from dps_billing.domain.claimed_push import ClaimedPush
from dps_billing.settings import Settings


class PushQueue:
    def __init__(self, settings: Settings, tx: Transactions):
        self._settings = settings
        self._tx = tx

    def claim(self, limit: int) -> list[ClaimedPush]:
        with self._tx() as session:
            return claim_pushes(session, limit, self._settings.push_lease_seconds)

    def wakeup(self) -> Wakeup:
        """A connection of its own, opened by whoever listens on it (nothing connects here)."""
        return PUSHES.wakeup(self._settings.database_url, "dps-billing-worker-listen")
