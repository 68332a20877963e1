"""The ``stripe`` package's exceptions, translated into the client's typed errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import stripe

from dps_billing.adapters.billing_platform.errors import (
    PlatformError,
    PlatformRejected,
    PlatformUnauthorized,
    PlatformUnavailable,
)
from dps_billing.adapters.billing_platform.retry import parse_retry_after

_E = TypeVar("_E", bound=PlatformError)


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """A response header, whatever the case of its name."""
    if not headers:
        return None
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def _error_body(error: stripe.StripeError) -> dict[str, object]:
    body = error.json_body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return dict(body["error"])
    return {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def translate(error: stripe.StripeError) -> PlatformError:
    body = _error_body(error)
    message = _text(body.get("message")) or error.user_message or type(error).__name__

    def build(kind: type[_E], text: str = message) -> _E:
        return kind(text, status=error.http_status, code=_text(body.get("code")) or error.code,
                    param=_text(body.get("param")), error_type=_text(body.get("type")), request_id=error.request_id)

    if isinstance(error, stripe.APIConnectionError):
        unreachable = build(PlatformUnavailable, f"the billing platform could not be reached: {message}")
        # timeouts and refused or reset connections are worth another try; a TLS failure is not
        unreachable.retry_later = error.should_retry
        return unreachable
    should_retry = header(error.headers, "Stripe-Should-Retry")
    status = error.http_status or 0
    if status == 401:
        return build(PlatformUnauthorized)
    if should_retry == "false":
        return build(PlatformRejected)
    if should_retry == "true" or status in (409, 429) or status >= 500:
        busy = build(PlatformUnavailable)
        busy.retry_after = parse_retry_after(header(error.headers, "Retry-After"))
        return busy
    return build(PlatformRejected)
