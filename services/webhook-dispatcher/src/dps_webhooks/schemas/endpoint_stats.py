"""The body of ``GET /webhook-configs/{id}/stats``: an endpoint's attempts per hour and its time to
success over a window."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from dps_common.openapi.examples import example

from dps_webhooks.domain.traffic_stats import TrafficStats
from dps_webhooks.schemas import ResponseModel


class WebhookConfigStatsHour(BaseModel):
    start: datetime = Field(description="The hour's beginning (UTC).")
    succeeded: int = Field(description="Attempts made in the hour that the receiver answered 2xx in time.")
    failed: int = Field(description="Every other attempt made in the hour (another status, a timeout, an error).")


class TimeToSuccess(BaseModel):
    p50: int | None = Field(description="Median, in milliseconds; null when no delivery succeeded in the window.")
    p95: int | None = Field(description="95th percentile, in milliseconds; null when none succeeded.")


def _hours() -> list[dict[str, Any]]:
    counts = [(40, 0)] * 21 + [(12, 31), (0, 44), (57, 2)]
    return [
        {"start": f"2026-11-0{1 + (10 + i) // 24}T{(10 + i) % 24:02d}:00:00Z", "succeeded": s, "failed": f}
        for i, (s, f) in enumerate(counts)
    ]


class WebhookConfigStats(ResponseModel):
    model_config = example({
        "webhookConfigId": "0192a3b4-c5d6-7e8f-9a0b-9c1d2e3f4a5b", "window": "24h",
        "from": "2026-11-01T10:00:00Z", "until": "2026-11-02T09:41:07Z", "hours": _hours(),
        "succeeded": 909, "failed": 77, "timeToSuccessMs": {"p50": 212, "p95": 91840},
    })  # fmt: skip
    webhookConfigId: str
    window: Literal["24h", "7d"]
    from_: datetime = Field(alias="from", description="The first hour's beginning (UTC).")
    until: datetime = Field(description="The time of the request: the last hour is still running.")
    hours: list[WebhookConfigStatsHour] = Field(description="Every hour of the window, oldest first, zeros included: 24 or 168.")
    succeeded: int = Field(description="Attempts answered 2xx in the window (the hours' sum).")
    failed: int = Field(description="Other attempts in the window (the hours' sum).")
    timeToSuccessMs: TimeToSuccess = Field(
        description="Over the deliveries that succeeded in the window: from the delivery's creation to its "
        "successful attempt's answer (retries and waits included)."
    )


def render_endpoint_stats(stats: TrafficStats) -> dict[str, Any]:
    window = stats.window
    return {
        "webhookConfigId": str(stats.endpoint_id),
        "window": window.name,
        "from": window.start,
        "until": window.until,
        "hours": [{"start": h.start, "succeeded": h.succeeded, "failed": h.failed} for h in stats.hours],
        "succeeded": stats.succeeded,
        "failed": stats.failed,
        "timeToSuccessMs": {"p50": stats.p50_ms, "p95": stats.p95_ms},
    }
