"""The client's errors: what the platform said (message, code, param), and what the caller may do."""

from __future__ import annotations


class PlatformError(Exception):
    """A call to the billing platform that did not succeed.

    ``retry_later``: whether the same call, with the same idempotency key, may succeed later (the
    platform was unavailable or busy); False when it would only be refused or replayed again.
    """

    retry_later = False

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None,
                 param: str | None = None, error_type: str | None = None, request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.param = param
        self.error_type = error_type
        self.request_id = request_id

    def __str__(self) -> str:
        details = ", ".join(f"{name}={value}" for name, value in (
            ("status", self.status), ("code", self.code), ("param", self.param), ("request_id", self.request_id))
            if value is not None)
        return f"{self.message} ({details})" if details else self.message


class PlatformUnauthorized(PlatformError):
    """401: the access token is expired or revoked. Refresh it once and call again."""


class PlatformRejected(PlatformError):
    """The platform refused the request (a 4xx other than 401, 409 and 429, or ``Stripe-Should-Retry:
    false``). The message, ``code`` and ``param`` say why; the same request would be refused again."""


class PlatformUnavailable(PlatformError):
    """No answer, or only transient ones (connection errors, 409, 429, 5xx), within the retry budget."""

    def __init__(self, message: str, *, retry_later: bool = True, retry_after: float | None = None,
                 status: int | None = None, code: str | None = None, param: str | None = None,
                 error_type: str | None = None, request_id: str | None = None) -> None:
        super().__init__(message, status=status, code=code, param=param, error_type=error_type,
                         request_id=request_id)
        self.retry_later = retry_later
        self.retry_after = retry_after  # the platform's last Retry-After, in seconds, when it sent one


class OAuthRejected(PlatformRejected):
    """The OAuth endpoint refused: ``code`` is its ``error`` (``invalid_request``, ...), the message its
    ``error_description``."""


class InvalidGrant(OAuthRejected):
    """``invalid_grant``: the code or refresh token is expired, used or revoked. The connection is lost;
    the admin has to connect again."""
