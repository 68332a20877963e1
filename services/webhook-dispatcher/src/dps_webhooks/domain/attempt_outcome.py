"""What one attempt's result means for its delivery and its endpoint (spec sections 3 and 6).

Only a 2xx answer is a success. Anything else (another status, a 3xx that is never followed, a
connection error, a timeout, a URL refused at attempt time) fails the attempt: the delivery is
``FAILED`` while attempts remain and ``EXHAUSTED`` after the last one. A success puts the endpoint's
consecutive failures back to 0; an exhausted delivery adds one; at the threshold the endpoint is
disabled.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dps_webhooks.domain.backoff import retry_gap


@dataclass(frozen=True)
class AttemptResult:
    """What one POST got: the status line if one arrived, and the error that stopped it if one did
    (both for a 2xx whose body had not arrived by the deadline: a timeout, so not a success)."""

    status: int | None
    excerpt: str | None  # the beginning of the response body
    error: str | None  # transport failure (refused URL, connection, TLS, timeout, reset)
    duration_ms: int
    # the request's signing as sent (``domain/request_headers.py``); None when nothing was signed
    webhook_timestamp: int | None = None
    webhook_signature: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def error_message(self) -> str | None:
        """The text kept as ``lastErrorMessage``: the transport error, or what the answer was."""
        if self.error is not None:
            return self.error
        if self.succeeded or self.status is None:
            return None
        if 300 <= self.status < 400:
            return f"The receiver answered {self.status}; redirects are not followed."
        return f"The receiver answered {self.status}; only 2xx counts as delivered."


class DeliveryStatus(enum.StrEnum):
    PENDING = "PENDING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    EXHAUSTED = "EXHAUSTED"


class EndpointEffect(enum.Enum):
    RESET_FAILURES = "reset"  # a success
    NONE = "none"  # a failed attempt with attempts left
    COUNT_FAILURE = "count"  # an exhausted delivery


@dataclass(frozen=True)
class Outcome:
    status: DeliveryStatus
    retry_in_seconds: float | None  # set when status is FAILED
    endpoint: EndpointEffect


def decide(
    result: AttemptResult,
    attempt: int,
    *,
    gaps: Sequence[float],
    jitter: float,
    random: Callable[[], float],
) -> Outcome:
    if result.succeeded:
        return Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES)
    gap = retry_gap(attempt, gaps, jitter, random)
    if gap is None:
        return Outcome(DeliveryStatus.EXHAUSTED, None, EndpointEffect.COUNT_FAILURE)
    return Outcome(DeliveryStatus.FAILED, gap, EndpointEffect.NONE)


def disabled_reason(consecutive_failures: int, disable_after: int) -> str | None:
    """The reason to disable an endpoint at this many consecutive failures, else None."""
    if consecutive_failures < disable_after:
        return None
    return f"Disabled after {consecutive_failures} consecutive failed deliveries."


@dataclass(frozen=True)
class EndpointState:
    status: str
    consecutive_failures: int
    disabled_reason: str | None = None  # set when these outcomes disabled the endpoint


def endpoint_after(
    status: str, consecutive_failures: int, effects: Iterable[EndpointEffect], disable_after: int
) -> EndpointState:
    """The endpoint after outcomes applied in the order they are recorded: a success resets the
    count, an exhausted delivery adds one, and an ACTIVE endpoint is disabled (once) when the count
    reaches the threshold."""
    failures, reason = consecutive_failures, None
    for effect in effects:
        if effect is EndpointEffect.RESET_FAILURES:
            failures = 0
        elif effect is EndpointEffect.COUNT_FAILURE:
            failures += 1
            why = disabled_reason(failures, disable_after)
            if why is not None and status == "ACTIVE":
                status, reason = "DISABLED", why
    return EndpointState(status, failures, reason)
