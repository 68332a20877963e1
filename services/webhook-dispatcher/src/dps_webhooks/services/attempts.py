"""The delivery loop's use case: one transaction records the attempts that finished and claims the
next due deliveries, and every recorded attempt gets its log line.

Every line about a delivery's attempt (``delivery attempted``, ``delivery attempt failed``, ``lease
lost``) carries ``requestId``, the request that caused its event (``webhook_events.request_id``, read
by the claim's join or handed over with the delivery), when there was one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from dps_common.db import Transactions
from dps_common.db_retry import is_connection_lost
from dps_common.work_queue.wakeup import Wakeup

from dps_webhooks.adapters import metrics
from dps_webhooks.db.deliveries import DELIVERIES, claim_due, seconds_to_next_due
from dps_webhooks.domain.claims import Claimed
from dps_webhooks.services.recording import Finished, record_outcomes
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.worker")

LISTEN_APPLICATION_NAME = "dps-webhooks-worker-listen"


@dataclass(frozen=True)
class Claims:
    """What one transaction claimed, and, when it took fewer than it could, how long until the next
    delivery falls due (None: none scheduled, or not looked for): the loop's timer."""

    claimed: list[Claimed] = field(default_factory=list)
    next_due_in: float | None = None


class Attempts:
    def __init__(self, settings: Settings, tx: Transactions):
        self._settings = settings
        self._tx = tx

    def wakeup(self, database_url: str) -> Wakeup:
        """What the delivery loop listens on to wake when deliveries become due (``NOTIFY``)."""
        return DELIVERIES.wakeup(database_url, LISTEN_APPLICATION_NAME)

    def record_and_claim(self, batch: Sequence[Finished], limit: int) -> Claims:
        """The results that are ready, then a claim of up to ``limit`` deliveries, in one transaction.
        When it fails, nothing is recorded: the claims stay and the next attempts are made when their
        leases end. A lost connection (the database is away) is raised, for the loop to log once and
        record the same results again once the database is back."""
        if not batch and limit <= 0:
            return Claims()
        settings = self._settings
        try:
            with self._tx() as session:
                recorded = record_outcomes(
                    session,
                    batch,
                    disable_after=settings.disable_after_failures,
                    wake_within_seconds=settings.poll_interval_seconds,
                )
                claimed = claim_due(session, limit, settings.lease_seconds) if limit > 0 else []
                next_due_in = seconds_to_next_due(session) if 0 < limit and len(claimed) < limit else None
        except Exception as error:
            metrics.TRANSACTIONS_FAILED.inc()
            if is_connection_lost(error):
                raise
            log.exception("claim or record failed", extra={"results": len(batch)})
            return Claims()
        metrics.TRANSACTIONS_COMMITTED.inc()
        if claimed:
            metrics.DELIVERIES_CLAIMED.inc(len(claimed))
        recorded_ids = {finished.claimed.delivery_id for finished in recorded}
        for finished in batch:
            if finished.claimed.delivery_id not in recorded_ids:
                metrics.LEASES_LOST.inc()
                log.warning("lease lost", extra=finished.claimed.log_fields())
                continue
            metrics.ATTEMPTS_RECORDED[finished.outcome.status].inc()
            log_attempt(finished)
        return Claims(claimed, next_due_in)


def log_attempt(finished: Finished) -> None:
    """One line per recorded attempt; a failed one says why (the receiver's status, a timeout, a TLS
    error, a refused address, ...) and when the next attempt comes, as the delivery history does."""
    result, outcome = finished.result, finished.outcome
    fields: dict[str, object] = {
        **finished.claimed.log_fields(),
        "receiver": _origin(finished.claimed.url),
        "status": outcome.status.value,
        "responseStatus": result.status,
        "durationMs": result.duration_ms,
    }
    if result.succeeded:
        log.info("delivery attempted", extra=fields)
        return
    fields["error"] = result.error_message
    if outcome.retry_in_seconds is not None:
        fields["retryInSeconds"] = round(outcome.retry_in_seconds, 1)
    log.warning("delivery attempt failed", extra=fields)


def _origin(url: str) -> str:
    """Scheme, host and port only: a receiver's path or query may carry a token of its own."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return "(not a valid URL)"
