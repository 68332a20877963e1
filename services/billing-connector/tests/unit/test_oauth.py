"""The Stripe Apps OAuth calls over a scripted ``requests`` transport: Basic auth with the app's
secret key, the grant, its recorded expiry, errors, and retries only where no grant can be lost."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import pytest
import requests
from requests.adapters import BaseAdapter
from urllib3.exceptions import MaxRetryError, NewConnectionError

from dps_billing.adapters.billing_platform.errors import (
    InvalidGrant,
    OAuthRejected,
    PlatformError,
    PlatformRejected,
    PlatformUnavailable,
)
from dps_billing.adapters.billing_platform.oauth import AppOAuth, TokenGrant
from dps_billing.adapters.billing_platform.retry import Retrier, RetryPolicy

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
GRANT = {"access_token": "tok_a", "refresh_token": "rt_a", "stripe_user_id": "acct_9", "livemode": False,
         "scope": "stripe_apps", "stripe_publishable_key": "pk_test", "token_type": "bearer"}


class Scripted(BaseAdapter):
    def __init__(self, *answers: tuple[int, Any, Mapping[str, str]] | Exception) -> None:
        super().__init__()
        self.answers = list(answers)
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        assert kwargs.get("timeout") is not None
        self.sent.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, body, headers = answer
        response = requests.Response()
        response.status_code = status
        response._content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        response.headers.update(headers)
        response.request = request
        return response

    def close(self) -> None:
        pass


def oauth(adapter: Scripted, sleeps: list[float] | None = None) -> AppOAuth:
    session = requests.Session()
    session.mount("http://", adapter)
    return AppOAuth(api_url="http://billing.test", secret_key="sk_app", client_id="ca_1", session=session,
                    retrier=Retrier(RetryPolicy(max_attempts=3), sleep=(sleeps if sleeps is not None else []).append,
                                    random=lambda: 1.0),
                    now=lambda: NOW)


def form(request: requests.PreparedRequest) -> dict[str, str]:
    body = request.body
    return dict(parse_qsl(body if isinstance(body, str) else (body or b"").decode()))


def test_exchange_code() -> None:
    adapter = Scripted((200, GRANT, {}))
    grant = oauth(adapter).exchange_code("ac_123")
    assert grant == TokenGrant(access_token="tok_a", refresh_token="rt_a", account_id="acct_9", livemode=False,
                               expires_at=NOW + timedelta(hours=1))
    [request] = adapter.sent
    assert (request.method, request.url) == ("POST", "http://billing.test/v1/oauth/token")
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"sk_app:").decode()
    assert form(request) == {"grant_type": "authorization_code", "code": "ac_123"}
    assert "tok_a" not in repr(grant) and "rt_a" not in repr(grant)


def test_refresh() -> None:
    adapter = Scripted((200, GRANT | {"access_token": "tok_b", "refresh_token": "rt_b", "livemode": True}, {}))
    grant = oauth(adapter).refresh("rt_a")
    assert (grant.access_token, grant.refresh_token, grant.livemode) == ("tok_b", "rt_b", True)
    assert form(adapter.sent[0]) == {"grant_type": "refresh_token", "refresh_token": "rt_a"}


def test_deauthorize() -> None:
    adapter = Scripted((200, {"stripe_user_id": "acct_9"}, {}))
    oauth(adapter).deauthorize("acct_9")
    assert adapter.sent[0].url == "http://billing.test/v1/oauth/deauthorize"
    assert form(adapter.sent[0]) == {"client_id": "ca_1", "stripe_user_id": "acct_9"}
    assert adapter.sent[0].headers["Authorization"].startswith("Basic ")


def test_invalid_grant_is_its_own_error() -> None:
    adapter = Scripted((400, {"error": "invalid_grant", "error_description": "Authorization code expired"}, {}))
    with pytest.raises(InvalidGrant) as raised:
        oauth(adapter).exchange_code("ac_old")
    assert (raised.value.code, raised.value.message, raised.value.status) == (
        "invalid_grant", "Authorization code expired", 400)
    assert len(adapter.sent) == 1


def test_other_oauth_errors() -> None:
    adapter = Scripted((400, {"error": "unsupported_grant_type", "error_description": "no"}, {}))
    with pytest.raises(OAuthRejected) as raised:
        oauth(adapter).refresh("rt")
    assert not isinstance(raised.value, InvalidGrant) and raised.value.code == "unsupported_grant_type"


def test_a_wrong_secret_key_is_a_rejection_not_an_expired_token() -> None:
    adapter = Scripted((401, {"error": {"type": "invalid_request_error", "message": "Invalid API Key provided"}}, {}))
    with pytest.raises(PlatformRejected) as raised:
        oauth(adapter).exchange_code("ac")
    assert raised.value.status == 401 and raised.value.message == "Invalid API Key provided"


def test_429_and_connections_never_made_are_retried() -> None:
    refused = requests.ConnectionError(MaxRetryError(None, "/v1/oauth/token",  # type: ignore[arg-type]
                                                     NewConnectionError(None, "refused")))  # type: ignore[arg-type]
    adapter = Scripted((429, {"error": {"type": "invalid_request_error", "message": "rate"}}, {"Retry-After": "3"}),
                       refused, (200, GRANT, {}))
    sleeps: list[float] = []
    assert oauth(adapter, sleeps).exchange_code("ac").account_id == "acct_9"
    assert len(adapter.sent) == 3 and sleeps == [3.0, 1.0]


@pytest.mark.parametrize("lost", [requests.ReadTimeout("read timed out"), requests.ConnectionError("reset")])
def test_an_answer_lost_after_sending_is_not_retried(lost: Exception) -> None:
    adapter = Scripted(lost, (200, GRANT, {}))
    with pytest.raises(PlatformUnavailable) as raised:
        oauth(adapter).refresh("rt")
    assert len(adapter.sent) == 1 and not raised.value.retry_later


def test_a_5xx_is_not_retried() -> None:
    adapter = Scripted((502, "bad gateway", {}), (200, GRANT, {}))
    with pytest.raises(PlatformUnavailable) as raised:
        oauth(adapter).refresh("rt")
    assert len(adapter.sent) == 1 and raised.value.status == 502 and not raised.value.retry_later


@pytest.mark.parametrize("body", [GRANT | {"access_token": None}, {k: v for k, v in GRANT.items() if k != "livemode"},
                                  "not json", [1, 2]])
def test_a_malformed_grant(body: Any) -> None:
    with pytest.raises(PlatformError) as raised:
        oauth(Scripted((200, body, {}))).exchange_code("ac")
    assert type(raised.value) is PlatformError  # neither a rejection nor worth a retry
