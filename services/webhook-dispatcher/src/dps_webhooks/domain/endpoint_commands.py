"""What the endpoint use cases are asked to do: plain values, no request bodies. Resources build
these from the bodies ``dps_webhooks.schemas.webhook_configs`` parses."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from dps_webhooks.domain.endpoint_status import EndpointStatus


@dataclass(frozen=True, slots=True)
class CreateEndpoint:
    url: str
    description: str = ""
    event_types: tuple[str, ...] = ()  # empty: every event type
    rate_limit_per_second: int | None = None  # None: no limit


class Keep(Enum):
    """A field of an update left as it is, where ``None`` is a value (no rate limit)."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True, slots=True)
class UpdateEndpoint:
    """A partial update: ``None`` leaves the field as it is (a body never sets one to null), but for
    the rate limit, which ``None`` clears and ``KEEP`` leaves."""

    url: str | None = None
    description: str | None = None
    event_types: tuple[str, ...] | None = None
    status: EndpointStatus | None = None
    rate_limit_per_second: int | None | Keep = KEEP
