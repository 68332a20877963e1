"""Bodies of ``POST /webhook-configs/{id}/recover``: the window asked for and what the call did."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, Field

from dps_common.openapi.examples import example

from dps_webhooks.domain.recovery import MAX_PER_CALL, Recovery
from dps_webhooks.schemas import RequestModel, ResponseModel

_SINCE, _UNTIL = "2026-11-02T08:00:00Z", "2026-11-02T14:30:00Z"


class WebhookRecoverRequest(RequestModel):
    model_config = example({"since": _SINCE, "until": _UNTIL})
    since: AwareDatetime = Field(
        description="Recover the deliveries created at this time or later (RFC 3339 with an offset); within "
        "the 30-day delivery history."
    )
    until: AwareDatetime | None = Field(
        None, description="And before this time (RFC 3339 with an offset); now when left out. After since."
    )


class WebhookRecovery(ResponseModel):
    model_config = example({"recovered": 1000, "hasMore": True, "since": _SINCE, "until": _UNTIL})
    recovered: int = Field(description=f"New deliveries made by this call (at most {MAX_PER_CALL}).")
    hasMore: bool = Field(
        description="More exhausted deliveries wait in the window: call again with the same since and until "
        "(the ones recovered are skipped)."
    )
    since: datetime
    until: datetime = Field(description="The window's end: the one sent, or the time of the call.")


def render_recovery(recovery: Recovery) -> dict[str, Any]:
    return {
        "recovered": recovery.recovered,
        "hasMore": recovery.has_more,
        "since": recovery.since,
        "until": recovery.until,
    }
