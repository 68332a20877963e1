"""Errors are data: each carries a stable ``code``; one table maps error kinds to HTTP statuses.

Nothing here imports a framework, so domain and service code raise these freely.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base of every error that reaches a client. ``code`` is stable and documented."""

    code = "error"
    title = "Error"
    retry_after: int | None = None  # seconds: the answer's Retry-After header, when set

    def __init__(self, detail: str, *, code: str | None = None, extra: dict[str, Any] | None = None):
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        self.extra = extra or {}


class BadRequest(ServiceError):
    code = "bad_request"
    title = "Bad request"


class ValidationFailed(BadRequest):
    """A request field is missing, malformed or of the wrong type. ``extra['errors']`` names fields."""

    code = "validation_error"
    title = "Invalid request"


class Unauthorized(ServiceError):
    code = "unauthorized"
    title = "Unauthorized"


class Forbidden(ServiceError):
    code = "forbidden"
    title = "Forbidden"


class MissingScope(Forbidden):
    """The key's role lacks a scope; ``requiredScope`` names it."""

    code = "missing_scope"

    def __init__(self, role: str, scope: str, action: str = "This operation"):
        super().__init__(
            f"{action} needs the scope '{scope}', which this API key's role ({role}) lacks.",
            extra={"requiredScope": str(scope)},
        )


class NotFound(ServiceError):
    code = "not_found"
    title = "Not found"


class RequestTimeout(ServiceError):
    """The client stopped sending its request body (the server's read deadlines, ``dps_common.edge``)."""

    code = "request_timeout"
    title = "Request timeout"


class Conflict(ServiceError):
    """The request is well-formed but clashes with the resource's current state."""

    code = "conflict"
    title = "Conflict"


class UnprocessableContent(ServiceError):
    """Well-formed, yet not processable as sent (RFC 9110 422): an Idempotency-Key reused for
    another request."""

    code = "unprocessable_content"
    title = "Unprocessable content"


class PayloadTooLarge(ServiceError):
    code = "payload_too_large"
    title = "Payload too large"


class UnsupportedMediaType(ServiceError):
    code = "unsupported_media_type"
    title = "Unsupported media type"


class RateLimited(ServiceError):
    """The caller spent its request budget (``dps_common.ratelimit``); Retry-After says when to retry."""

    code = "rate_limited"
    title = "Too many requests"


class UpstreamFailed(ServiceError):
    """A platform we call (billing, another service) failed or refused."""

    code = "upstream_error"
    title = "Upstream failure"


class ServiceUnavailable(ServiceError):
    """A dependency this request needs (the api's key introspection, say) cannot answer now."""

    code = "service_unavailable"
    title = "Service unavailable"


class DatabaseUnavailable(ServiceUnavailable):
    """The service's database cannot be reached, or the connection was lost while the request could
    not be retried (``dps_common.db_retry``): 503 with Retry-After; the client may try again."""

    retry_after = 1
    DETAIL = "The service cannot reach its database at the moment. Retry after 1 second."

    def __init__(self) -> None:
        super().__init__(self.DETAIL)


HTTP_STATUS: dict[type[ServiceError], int] = {
    BadRequest: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    RequestTimeout: 408,
    Conflict: 409,
    UnprocessableContent: 422,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    RateLimited: 429,
    UpstreamFailed: 502,
    ServiceUnavailable: 503,
}


def http_status_of(error: ServiceError) -> int:
    for kind in type(error).__mro__:
        if kind in HTTP_STATUS:
            return HTTP_STATUS[kind]
    return 500


def not_found(what: str) -> NotFound:
    return NotFound(f"{what} not found.")


def invalid_fields(errors: list[tuple[str, str]], code: str | None = None) -> ValidationFailed:
    """A 400 naming each offending field (``lines[0].quantity``) with its message; the first leads."""
    fields = [{"field": field, "message": message} for field, message in errors]
    return ValidationFailed(f"{errors[0][0]}: {errors[0][1]}", code=code, extra={"errors": fields})


def invalid_field(field: str, message: str, code: str | None = None) -> ValidationFailed:
    return invalid_fields([(field, message)], code)
