"""An endpoint's traffic counted in the database (``services/endpoint_stats.py``): attempts per hour
and the percentiles of the time to a success, two statements over the partitioned history.

Attempts carry no endpoint: they are reached through the endpoint's deliveries (the ``(endpoint_id,
id)`` index), only those whose last attempt falls in the window, then each one's attempts by
``delivery_id`` (the attempts' unique ``(delivery_id, attempt)``). Both sides are bounded below by a
UUIDv7 id (``lookback``), so only the partitions of the days that can hold the window's attempts are
read: a delivery is attempted within its retry schedule of its creation, or later only when a pause
held it.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.orm import Session

from dps_webhooks.db.id_bounds import first_id_at
from dps_webhooks.domain.traffic_stats import HourCount

# every hour of the window from generate_series, the attempts counted into theirs (UTC hours)
_HOURS = text(
    """
    WITH attempted AS (
        SELECT date_trunc('hour', a.attempted_at, 'UTC') AS hour,
               coalesce(a.response_status BETWEEN 200 AND 299, false) AND a.error_message IS NULL AS ok
        FROM webhook_deliveries d
        JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
        WHERE d.endpoint_id = :endpoint AND d.id >= :low AND a.delivery_id >= :low
          AND d.last_attempted_at >= :start
          AND a.attempted_at >= :start AND a.attempted_at < :until
    )
    SELECT h.hour,
           count(a.ok) FILTER (WHERE a.ok) AS succeeded,
           count(a.ok) FILTER (WHERE NOT a.ok) AS failed
    FROM generate_series(CAST(:start AS timestamptz), CAST(:last_hour AS timestamptz), interval '1 hour') AS h(hour)
    LEFT JOIN attempted a ON a.hour = h.hour
    GROUP BY h.hour
    ORDER BY h.hour
    """
)

# from creation to the successful attempt's answer (its start plus its duration), in milliseconds
_TIME_TO_SUCCESS = text(
    """
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)
    FROM (
        SELECT extract(epoch FROM d.last_attempted_at - d.created_at) * 1000 + d.last_duration_ms AS ms
        FROM webhook_deliveries d
        WHERE d.endpoint_id = :endpoint AND d.id >= :low AND d.status = 'SUCCESS'
          AND d.completed_at >= :start AND d.completed_at < :until
    ) AS succeeded
    """
)


def hourly_attempts(
    session: Session, endpoint_id: UUID, start: datetime, last_hour: datetime, until: datetime, lookback: datetime
) -> list[HourCount]:
    """One count per hour from ``start`` to ``last_hour`` (zeros included), of the attempts in
    ``[start, until)`` of the endpoint's deliveries created since ``lookback``."""
    rows = session.execute(
        _HOURS,
        {"endpoint": endpoint_id, "low": first_id_at(lookback), "start": start, "last_hour": last_hour, "until": until},
    )
    return [HourCount(hour, succeeded, failed) for hour, succeeded, failed in rows]


def time_to_success(
    session: Session, endpoint_id: UUID, start: datetime, until: datetime, lookback: datetime
) -> tuple[int | None, int | None]:
    """The p50 and p95 (continuous) of the time to success of the deliveries that succeeded in
    ``[start, until)``, in whole milliseconds; None when none did."""
    p50, p95 = session.execute(
        _TIME_TO_SUCCESS, {"endpoint": endpoint_id, "low": first_id_at(lookback), "start": start, "until": until}
    ).one()
    return (None if p50 is None else round(p50), None if p95 is None else round(p95))
