"""An endpoint's traffic (``GET /webhook-configs/{id}/stats``): its attempts per hour over the last
24 hours or 7 days, succeeded and failed, and the p50/p95 time from a delivery's creation to its
successful attempt, for an integration (and the console) to watch its own endpoint.

The hours come from the counts kept per endpoint and hour as attempts are recorded
(``db/endpoint_stats.py``). The percentiles read the deliveries created since the window's start less
``lookback``: the retry schedule's span (8 attempts, their gaps at the most jitter) and a day more. A
delivery held by a pause of the endpoint longer than that and succeeding in the window is the one
left out of them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from uuid import UUID

from dps_common.auth.principal import Principal
from dps_common.db import Transactions

from dps_webhooks.db.endpoint_stats import hourly_attempts, time_to_success
from dps_webhooks.domain.traffic_stats import TrafficStats, traffic_window
from dps_webhooks.services.endpoints import load_endpoint
from dps_webhooks.settings import Settings


class EndpointStatsService:
    def __init__(self, tx: Transactions, settings: Settings, now: Callable[[], datetime]):
        self._tx = tx
        schedule = timedelta(seconds=sum(settings.retry_gaps) * (1 + settings.retry_jitter) + settings.lease_seconds)
        self._lookback = schedule + timedelta(days=1)
        self._now = now

    def stats(self, principal: Principal, endpoint_id: UUID, window_name: str) -> TrafficStats:
        window = traffic_window(window_name, self._now().astimezone(UTC))
        lookback = window.start - self._lookback
        with self._tx.read() as session:
            load_endpoint(session, principal.organization_id, endpoint_id)
            hours = hourly_attempts(session, endpoint_id, window.start, window.last_hour)
            p50, p95 = time_to_success(session, endpoint_id, window.start, window.until, lookback)
        return TrafficStats(endpoint_id, window, tuple(hours), p50, p95)
