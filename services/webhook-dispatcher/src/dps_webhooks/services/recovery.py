"""Recovering an endpoint's outage (``POST /webhook-configs/{id}/recover``): each ``EXHAUSTED``
delivery created in the window gets one more delivery, as a manual retry would make it.

A recovery delivery is a manual retry's (``services/deliveries.py``): a new delivery of the same event
(same ``eventId``, new ``id``, ``retryOf`` the exhausted one), made by ``intake.delivery_row`` under
the same rules (held while the endpoint is ``PAUSED``; 409 while ``DISABLED`` or once revoked, by
``new_delivery_held``). What differs: a thousand at most per call, oldest first, and not all due at
once: spread at the endpoint's ``rateLimitPerSecond`` or ``WEBHOOK_RECOVER_PER_SECOND``, a next call
continuing after the spread of the one before. ``FAILED`` deliveries keep their own retries and are
left alone; a delivery that a recovery or a manual retry already redelivered is skipped, so a repeated
call goes on where the last stopped and never redelivers one twice.

The endpoint's row is locked for the call (as a manual retry locks it): two recoveries of one
endpoint, or a recovery and a retry, take turns, and the second sees the first's deliveries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from uuid import UUID

from dps_common.auth.principal import Principal
from dps_common.db import Transactions

from dps_webhooks.db.deliveries import insert_deliveries, notify_due
from dps_webhooks.db.recovery import exhausted_not_redelivered, spread_ends_in
from dps_webhooks.domain.endpoint_status import EndpointStatus, new_delivery_held
from dps_webhooks.domain.recovery import MAX_PER_CALL, Recovery, recovery_window, spread
from dps_webhooks.services import intake
from dps_webhooks.services.endpoints import load_endpoint
from dps_webhooks.settings import Settings

log = logging.getLogger("dps.webhooks.recovery")


class RecoveryService:
    def __init__(self, tx: Transactions, settings: Settings, now: Callable[[], datetime]):
        self._tx = tx
        self._history = timedelta(days=settings.retention_days)
        self._per_second = settings.recover_per_second
        self._now = now

    def recover(self, principal: Principal, endpoint_id: UUID, since: datetime, until: datetime | None) -> Recovery:
        now = self._now()
        since, until = recovery_window(since, until, now=now, history=self._history)
        with self._tx() as session:
            endpoint = load_endpoint(session, principal.organization_id, endpoint_id, lock=True)
            held = new_delivery_held(EndpointStatus(endpoint.status), revoked=endpoint.revoked_at is not None, is_test=False)
            found = exhausted_not_redelivered(session, endpoint.id, since, until, MAX_PER_CALL + 1)
            batch = found[:MAX_PER_CALL]
            per_second = endpoint.rate_limit_per_second or self._per_second
            # held ones have no due time: resuming releases them (and the throttle paces the sends)
            after = None if held else spread_ends_in(session, endpoint.id, now)
            offsets = spread(len(batch), per_second, after=after)
            rows = [
                intake.delivery_row(
                    # the body is not needed to schedule a delivery: the worker reads it from the event
                    intake.IncomingEvent(e.event_id, e.organization_id, e.event_type, e.occurred_at, "", e.body_bytes),
                    endpoint.id,
                    now=timedelta(seconds=offset),
                    held=held,
                    retry_of=e.delivery_id,
                )
                for e, offset in zip(batch, offsets, strict=True)
            ]
            insert_deliveries(session, rows)
            if rows and not held:
                notify_due(session)
        result = Recovery(len(rows), len(found) > MAX_PER_CALL, since, until)
        log.info(
            "deliveries recovered",
            extra={"webhookConfigId": str(endpoint_id), "recovered": result.recovered, "hasMore": result.has_more},
        )
        return result
