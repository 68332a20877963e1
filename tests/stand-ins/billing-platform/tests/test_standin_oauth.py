"""Stripe Apps OAuth: the install page, one-time codes, token exchange, rolling refresh, expiry,
deauthorization."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import stripe

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import CLIENT_ID, REDIRECT_URI, SECRET_KEY, Api, connect, error_of, exchange_code


def _authorize(stand_in: BillingStandIn, method: str = "GET", **params: str) -> requests.Response:
    url = stand_in.marketplace_url + "/oauth/v2/authorize"
    if method == "GET":
        return requests.get(url, params=params, allow_redirects=False, timeout=10)
    return requests.post(url, data=params, allow_redirects=False, timeout=10)


def _query(answer: requests.Response) -> dict[str, list[str]]:
    location = answer.headers["Location"]
    assert location.startswith(REDIRECT_URI + "?")
    return parse_qs(urlsplit(location).query)


def _token(stand_in: BillingStandIn, data: dict[str, str], auth: Any = (SECRET_KEY, "")) -> requests.Response:
    return requests.post(stand_in.api_url + "/v1/oauth/token", data=data, auth=auth, timeout=10)


def test_the_install_page_has_install_and_cancel(stand_in: BillingStandIn) -> None:
    page = _authorize(stand_in, client_id=CLIENT_ID, redirect_uri=REDIRECT_URI, state="s-1")
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert "value=install" in page.text and "value=cancel" in page.text and "s-1" in page.text
    assert page.headers["Request-Id"].startswith("req_")


@pytest.mark.parametrize(
    "params",
    [
        {"redirect_uri": REDIRECT_URI},
        {"client_id": "ca_other", "redirect_uri": REDIRECT_URI},
        {"client_id": CLIENT_ID, "redirect_uri": "https://evil.example/callback"},
    ],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_bad_client_or_redirect_uri_gets_an_error_page_never_a_redirect(
    stand_in: BillingStandIn, params: dict[str, str], method: str
) -> None:
    answer = _authorize(stand_in, method, **params, state="s", decision="install")
    assert answer.status_code == 400 and "Location" not in answer.headers
    assert answer.headers["Content-Type"].startswith("text/html")
    assert stand_in.installed_accounts() == []


def test_install_redirects_with_a_code_and_the_state(stand_in: BillingStandIn) -> None:
    answer = _authorize(stand_in, "POST", client_id=CLIENT_ID, redirect_uri=REDIRECT_URI, state="mode=test&n=1",
                        decision="install", account="acct_chosen123")
    assert answer.status_code == 303
    query = _query(answer)
    assert query["state"] == ["mode=test&n=1"] and query["code"][0].startswith("ac_")
    grant = exchange_code(stand_in, query["code"][0]).json()
    assert grant["stripe_user_id"] == "acct_chosen123"
    assert stand_in.installed_accounts() == ["acct_chosen123"]


def test_cancel_redirects_with_access_denied(stand_in: BillingStandIn) -> None:
    answer = _authorize(stand_in, "POST", client_id=CLIENT_ID, redirect_uri=REDIRECT_URI, state="s-2",
                        decision="cancel")
    assert answer.status_code == 303
    query = _query(answer)
    assert query["error"] == ["access_denied"] and query["state"] == ["s-2"] and query["error_description"]
    assert "code" not in query and stand_in.installed_accounts() == []


def test_the_token_answer_is_stripes(stand_in: BillingStandIn) -> None:
    answer = exchange_code(stand_in, stand_in.install())
    assert answer.status_code == 200
    grant = answer.json()
    assert set(grant) == {"access_token", "refresh_token", "stripe_user_id", "livemode", "scope",
                          "stripe_publishable_key", "token_type"}
    assert grant["scope"] == "stripe_apps" and grant["token_type"] == "bearer" and grant["livemode"] is False
    assert grant["stripe_user_id"].startswith("acct_") and grant["stripe_publishable_key"].startswith("pk_test_")
    assert grant["refresh_token"].startswith("rt_")


def test_each_install_is_a_new_account_unless_one_is_chosen(stand_in: BillingStandIn) -> None:
    assert connect(stand_in)["stripe_user_id"] != connect(stand_in)["stripe_user_id"]
    assert connect(stand_in, "acct_fixed1")["stripe_user_id"] == "acct_fixed1"


def test_the_apps_key_may_come_as_bearer_and_the_stripe_package_can_call(stand_in: BillingStandIn) -> None:
    client = stripe.StripeClient(SECRET_KEY, base_addresses={"api": stand_in.api_url})
    answer = client.raw_request("post", "/v1/oauth/token", grant_type="authorization_code", code=stand_in.install())
    assert client.deserialize(answer, api_mode="V1")["token_type"] == "bearer"


@pytest.mark.parametrize(
    ("auth", "error"),
    [(None, "invalid_request"), (("sk_test_not_the_app", ""), "invalid_client")],
)
def test_the_token_endpoint_needs_the_apps_key(stand_in: BillingStandIn, auth: Any, error: str) -> None:
    answer = _token(stand_in, {"grant_type": "authorization_code", "code": stand_in.install()}, auth=auth)
    assert answer.status_code == 401 and answer.json()["error"] == error


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({}, "invalid_request"),
        ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
        ({"grant_type": "authorization_code"}, "invalid_request"),
        ({"grant_type": "authorization_code", "code": "ac_unknown"}, "invalid_grant"),
        ({"grant_type": "refresh_token"}, "invalid_request"),
        ({"grant_type": "refresh_token", "refresh_token": "rt_unknown"}, "invalid_grant"),
        ({"grant_type": "authorization_code", "code": "ac_x", "scope": "read_write"}, "invalid_request"),
    ],
)
def test_token_errors(stand_in: BillingStandIn, data: dict[str, str], error: str) -> None:
    answer = _token(stand_in, data)
    assert answer.status_code == 400
    assert answer.json()["error"] == error and answer.json()["error_description"]


def test_a_code_used_twice_fails_and_revokes_its_grant(stand_in: BillingStandIn) -> None:
    code = stand_in.install()
    grant = exchange_code(stand_in, code).json()
    api = Api(stand_in.api_url, grant["access_token"])
    assert api.get("/v1/products").status_code == 200
    again = exchange_code(stand_in, code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert api.get("/v1/products").status_code == 401
    refresh = _token(stand_in, {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]})
    assert refresh.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("expire", ["method", "clock"])
def test_a_code_lasts_five_minutes(stand_in: BillingStandIn, expire: str) -> None:
    code = stand_in.install()
    if expire == "method":
        stand_in.expire_codes()
    else:
        stand_in.advance_clock(301)
    answer = exchange_code(stand_in, code)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


def test_every_refresh_rolls_the_refresh_token(stand_in: BillingStandIn, grant: dict[str, Any]) -> None:
    first = _token(stand_in, {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]}).json()
    assert first["refresh_token"] != grant["refresh_token"] and first["access_token"] != grant["access_token"]
    assert first["stripe_user_id"] == grant["stripe_user_id"] and "expires_in" not in first
    old = _token(stand_in, {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]})
    assert old.status_code == 400 and old.json()["error"] == "invalid_grant"
    second = _token(stand_in, {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]})
    assert second.status_code == 200
    assert Api(stand_in.api_url, second.json()["access_token"]).get("/v1/products").status_code == 200


@pytest.mark.parametrize("expire", ["method", "clock"])
def test_access_tokens_last_an_hour(stand_in: BillingStandIn, grant: dict[str, Any], expire: str) -> None:
    api = Api(stand_in.api_url, grant["access_token"])
    if expire == "method":
        stand_in.expire_access_tokens()
    else:
        stand_in.advance_clock(3600)
    error = error_of(api.get("/v1/products"), 401)
    assert error["type"] == "invalid_request_error" and error["code"] == "api_key_expired"
    client = stripe.StripeClient(grant["access_token"], base_addresses={"api": stand_in.api_url})
    with pytest.raises(stripe.AuthenticationError) as caught:
        client.v1.products.list()
    body = caught.value.json_body  # the package leaves .code unset on 401s
    assert isinstance(body, dict) and body["error"]["code"] == "api_key_expired"
    fresh = _token(stand_in, {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]}).json()
    assert Api(stand_in.api_url, fresh["access_token"]).get("/v1/products").status_code == 200


def test_deauthorize_revokes_the_accounts_tokens(stand_in: BillingStandIn, grant: dict[str, Any]) -> None:
    account = grant["stripe_user_id"]
    data = {"client_id": CLIENT_ID, "stripe_user_id": account}
    answer = requests.post(stand_in.api_url + "/v1/oauth/deauthorize", data=data, auth=(SECRET_KEY, ""), timeout=10)
    assert answer.status_code == 200 and answer.json() == {"stripe_user_id": account}
    assert error_of(Api(stand_in.api_url, grant["access_token"]).get("/v1/products"), 401)
    refresh = _token(stand_in, {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]})
    assert refresh.json()["error"] == "invalid_grant"
    twice = requests.post(stand_in.api_url + "/v1/oauth/deauthorize", data=data, auth=(SECRET_KEY, ""), timeout=10)
    assert twice.status_code == 400 and twice.json()["error"] == "invalid_client"


@pytest.mark.parametrize(
    ("data", "auth", "status", "error"),
    [
        ({"client_id": "ca_other"}, (SECRET_KEY, ""), 400, "invalid_client"),
        ({"client_id": CLIENT_ID}, None, 401, "invalid_request"),
        ({"client_id": CLIENT_ID}, ("sk_test_wrong", ""), 401, "invalid_client"),
        ({}, (SECRET_KEY, ""), 400, "invalid_request"),
    ],
)
def test_deauthorize_errors(stand_in: BillingStandIn, grant: dict[str, Any], data: dict[str, str], auth: Any,
                            status: int, error: str) -> None:
    body = {**data, "stripe_user_id": grant["stripe_user_id"]}
    answer = requests.post(stand_in.api_url + "/v1/oauth/deauthorize", data=body, auth=auth, timeout=10)
    assert answer.status_code == status and answer.json()["error"] == error
    assert stand_in.installed_accounts() == [grant["stripe_user_id"]]


def test_the_token_of_one_account_cannot_act_on_another(stand_in: BillingStandIn, grant: dict[str, Any]) -> None:
    other = connect(stand_in)["stripe_user_id"]
    headers = {"Authorization": f"Bearer {grant['access_token']}", "Stripe-Account": other}
    answer = requests.get(stand_in.api_url + "/v1/products", headers=headers, timeout=10)
    assert error_of(answer, 403)["code"] == "account_invalid"
