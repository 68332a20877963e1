"""An endpoint's traffic counted in the database (``services/endpoint_stats.py``): attempts per hour
and the percentiles of the time to a success, two statements.

The hours are read from ``webhook_endpoint_hours``, the attempts counted per endpoint and hour as
they are inserted (``db/models/endpoint_hours.py``): a row or two an hour, however busy the
endpoint. Every attempt the history holds is counted, that of a delivery held by a pause for days
too; retention drops a day's counts with the day's partitions.

The time to success is read on the deliveries' partial index of their successes by ``(endpoint_id,
completed_at)``, index-only, bounded below by a UUIDv7 id (``lookback``) so that only the partitions
of the days that can hold the window's successes are read: a delivery is attempted within its retry
schedule of its creation, or later only when a pause held it.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from sqlalchemy import text
from sqlalchemy.orm import Session

from dps_webhooks.db.id_bounds import first_id_at
from dps_webhooks.domain.traffic_stats import HourCount

# every hour of the window from generate_series (UTC hours), zeros included
_HOURS = text(
    """
    SELECT h.hour, coalesce(sum(c.succeeded), 0) AS succeeded, coalesce(sum(c.failed), 0) AS failed
    FROM generate_series(CAST(:start AS timestamptz), CAST(:last_hour AS timestamptz), interval '1 hour') AS h(hour)
    LEFT JOIN webhook_endpoint_hours c ON c.endpoint_id = :endpoint AND c.hour = h.hour
    GROUP BY h.hour
    ORDER BY h.hour
    """
)

# from creation to the successful attempt's answer (its start plus its duration), in milliseconds;
# date_part's double precision, not extract's numeric: half the time on a week's successes, and
# percentile_cont takes double precision anyway
_TIME_TO_SUCCESS = text(
    """
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)
    FROM (
        SELECT date_part('epoch', d.last_attempted_at - d.created_at) * 1000 + d.last_duration_ms AS ms
        FROM webhook_deliveries d
        WHERE d.endpoint_id = :endpoint AND d.id >= :low AND d.status = 'SUCCESS'
          AND d.completed_at >= :start AND d.completed_at < :until
    ) AS succeeded
    """
)


def hourly_attempts(session: Session, endpoint_id: UUID, start: datetime, last_hour: datetime) -> list[HourCount]:
    """One count per hour from ``start`` to ``last_hour`` (zeros included) of the endpoint's attempts."""
    rows = session.execute(_HOURS, {"endpoint": endpoint_id, "start": start, "last_hour": last_hour})
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
