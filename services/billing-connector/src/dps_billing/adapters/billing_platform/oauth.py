"""The Stripe Apps OAuth calls: code exchange, refresh, deauthorize.

The ``stripe`` package's ``client.oauth`` is Connect's (``connect.stripe.com``), and its
``raw_request`` authenticates with Bearer; Stripe Apps want the app's secret key as the HTTP Basic
user with an empty password, so these calls go through ``requests``.

A code is single-use and every refresh expires the refresh token it used: a retried exchange or
refresh whose first answer was lost would lose the grant. So these calls are retried only when the
request certainly did not reach the platform (connection refused, connect timeout) or was turned
away unprocessed (429); anything else ends the call with a typed error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError

from dps_billing.adapters.billing_platform.client import DEFAULT_TIMEOUT
from dps_billing.adapters.billing_platform.errors import (
    InvalidGrant,
    OAuthRejected,
    PlatformError,
    PlatformRejected,
    PlatformUnavailable,
)
from dps_billing.adapters.billing_platform.pacing import NoPacing, Pacer, turn_of
from dps_billing.adapters.billing_platform.retry import Retrier, parse_retry_after

ACCESS_TOKEN_LIFETIME = timedelta(hours=1)  # Stripe sends no expires_in; its access tokens last an hour
APP_PACING_KEY = "oauth"  # the OAuth calls are the app's, not an account's: paced under this key


@dataclass(frozen=True)
class TokenGrant:
    access_token: str
    refresh_token: str
    account_id: str  # stripe_user_id
    livemode: bool
    expires_at: datetime  # when the access token stops working (recorded here: the platform sends none)

    def __repr__(self) -> str:  # never print a token
        return (f"TokenGrant(account_id={self.account_id!r}, livemode={self.livemode}, "
                f"expires_at={self.expires_at.isoformat()})")


class AppOAuth:
    def __init__(self, *, api_url: str, secret_key: str, client_id: str, session: requests.Session | None = None,
                 timeout: float | tuple[float, float] = DEFAULT_TIMEOUT, pacer: Pacer | None = None,
                 retrier: Retrier | None = None, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._api_url = api_url.rstrip("/")
        self._secret_key = secret_key
        self._client_id = client_id
        self._session = session or requests.Session()
        self._timeout = timeout
        self._pacer: Pacer = pacer or NoPacing()
        self._retrier = retrier or Retrier()
        self._now = now

    def exchange_code(self, code: str) -> TokenGrant:
        return self._grant({"grant_type": "authorization_code", "code": code})

    def refresh(self, refresh_token: str) -> TokenGrant:
        return self._grant({"grant_type": "refresh_token", "refresh_token": refresh_token})

    def deauthorize(self, account_id: str) -> None:
        """Disconnects the app from ``account_id``. An account that is not connected (any more) is an
        ``OAuthRejected`` (Stripe says ``invalid_client``): the caller decides whether that is done."""
        self._post("/v1/oauth/deauthorize", {"client_id": self._client_id, "stripe_user_id": account_id})

    def _grant(self, form: dict[str, str]) -> TokenGrant:
        asked_at = self._now()
        body = self._post("/v1/oauth/token", form)
        try:
            access_token, refresh_token, account_id = body["access_token"], body["refresh_token"], body["stripe_user_id"]
            livemode = body["livemode"]
        except KeyError as missing:
            raise PlatformError(f"the token answer has no {missing.args[0]}") from None
        if not all(isinstance(value, str) and value for value in (access_token, refresh_token, account_id)) \
                or not isinstance(livemode, bool):
            raise PlatformError("the token answer is malformed")
        # counted from before the call, so the recorded expiry is never later than the real one
        return TokenGrant(access_token=access_token, refresh_token=refresh_token, account_id=account_id,
                          livemode=livemode, expires_at=asked_at + ACCESS_TOKEN_LIFETIME)

    def _post(self, path: str, form: dict[str, str]) -> dict[str, Any]:
        def attempt() -> dict[str, Any]:
            try:
                with turn_of(self._pacer, APP_PACING_KEY):
                    response = self._session.post(f"{self._api_url}{path}", data=form, auth=(self._secret_key, ""),
                                                  timeout=self._timeout)
            except requests.RequestException as error:
                raise PlatformUnavailable(f"the billing platform could not be reached: {type(error).__name__}",
                                          retry_later=_not_sent(error)) from error
            return _answer(response)

        return self._retrier.run(attempt)


def _not_sent(error: requests.RequestException) -> bool:
    if isinstance(error, requests.ConnectTimeout):
        return True
    if isinstance(error, requests.ConnectionError) and error.args:
        reason = error.args[0].reason if isinstance(error.args[0], MaxRetryError) else None
        return isinstance(reason, NewConnectionError)
    return False


def _answer(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    request_id = response.headers.get("Request-Id")
    if response.ok:
        if not isinstance(body, dict):
            raise PlatformError("the billing platform's answer is not a JSON object", status=response.status_code,
                                request_id=request_id)
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if response.status_code == 429:
        raise PlatformUnavailable("the billing platform is rate limiting the app", status=429,
                                  retry_after=parse_retry_after(response.headers.get("Retry-After")),
                                  request_id=request_id)
    if isinstance(error, str):  # OAuth errors: {"error": "invalid_grant", "error_description": ...}
        assert isinstance(body, dict)
        description = body.get("error_description")
        kind = InvalidGrant if error == "invalid_grant" else OAuthRejected
        raise kind(description if isinstance(description, str) else error, status=response.status_code, code=error,
                   request_id=request_id)
    if response.status_code >= 500:  # processed or not, nobody knows: not retried (see the module docstring)
        raise PlatformUnavailable(f"the billing platform answered {response.status_code}",
                                  status=response.status_code, retry_later=False, request_id=request_id)
    if isinstance(error, dict):  # API errors (a wrong secret key, ...)
        message = error.get("message")
        raise PlatformRejected(message if isinstance(message, str) else f"HTTP {response.status_code}",
                               status=response.status_code, code=_text(error.get("code")),
                               param=_text(error.get("param")), error_type=_text(error.get("type")),
                               request_id=request_id)
    raise PlatformRejected(f"the billing platform answered {response.status_code}", status=response.status_code,
                           request_id=request_id)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
