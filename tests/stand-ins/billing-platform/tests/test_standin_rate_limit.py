"""The rate-limit mode: 429 for an account's call once N calls were admitted in the second before it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
import requests

from dps_billing_stand_in import BillingStandIn, Faults

from billing_stand_in_helpers import CLIENT_ID, SECRET_KEY, Api, connect, error_of


def test_the_window_slides_per_account_and_refusals_do_not_count() -> None:
    faults = Faults()
    limit = faults.rate_limit(2)
    admitted = [faults.over_rate("POST", "/v1/products", "acct_a", at) is None for at in (10.0, 10.5, 10.9, 10.99)]
    assert admitted == [True, True, False, False]
    assert limit.fired == 2
    assert faults.over_rate("POST", "/v1/prices", "acct_b", 10.99) is None  # another account has its own window
    # 10.0 leaves the window at 11.0 exactly (a window is one second, open at its start); the refusals at
    # 10.9 and 10.99 were never admitted, so they do not hold the window.
    assert faults.over_rate("GET", "/v1/quotes", "acct_a", 11.0) is None
    assert faults.over_rate("GET", "/v1/quotes", "acct_a", 11.2) is limit
    assert faults.over_rate("GET", "/v1/quotes", "acct_a", 11.5) is None


def test_only_matching_calls_count_and_clear_removes_the_limit() -> None:
    faults = Faults()
    faults.rate_limit(1, path_prefix="/v1/products", method="post")
    assert faults.over_rate("GET", "/v1/products", "acct", 1.0) is None
    assert faults.over_rate("POST", "/v1/prices", "acct", 1.0) is None
    assert faults.over_rate("POST", "/v1/products", "acct", 1.0) is None
    assert faults.over_rate("POST", "/v1/products", "acct", 1.1) is not None
    faults.clear()
    assert faults.over_rate("POST", "/v1/products", "acct", 1.2) is None


@pytest.mark.parametrize("per_second, window", [(0, 1.0), (1, 0.0)])
def test_a_rate_limit_needs_a_positive_rate_and_window(per_second: int, window: float) -> None:
    with pytest.raises(ValueError):
        Faults().rate_limit(per_second, window=window)


def test_over_http_the_429_is_stripe_s_and_nothing_is_stored(stand_in: BillingStandIn) -> None:
    first, second = connect(stand_in), connect(stand_in)
    one, other = Api(stand_in.api_url, first["access_token"]), Api(stand_in.api_url, second["access_token"])
    stand_in.clear_requests()
    stand_in.faults.rate_limit(3, window=60)  # a long window: the assertions cannot depend on timing
    answers = [one.post("/v1/products", {"name": "W"}, key=f"k-{n}") for n in range(5)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
    refused = error_of(answers[3], 429)
    assert refused["code"] == "rate_limit" and refused["type"] == "invalid_request_error"
    assert "Retry-After" not in answers[3].headers and "Stripe-Should-Retry" not in answers[3].headers
    assert len(stand_in.objects("product", first["stripe_user_id"])) == 3
    assert other.post("/v1/products", {"name": "W"}).status_code == 200  # the other account's own budget
    assert [r.status for r in stand_in.requests(path="/v1/products")] == [200, 200, 200, 429, 429, 200]


def test_the_app_s_own_key_counts_against_its_own_account(stand_in: BillingStandIn) -> None:
    grant = connect(stand_in)  # the token exchange is made with the app's secret key
    stand_in.faults.rate_limit(1, window=60)
    refresh = {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]}
    answers = [requests.post(stand_in.api_url + "/v1/oauth/token", auth=(SECRET_KEY, ""), data=refresh, timeout=10)
               for _ in range(2)]
    assert answers[0].status_code == 200
    assert error_of(answers[1], 429)["code"] == "rate_limit"
    assert Api(stand_in.api_url, grant["access_token"]).get("/v1/products").status_code == 200


def test_start_s_rate_limit_is_one_per_second_window() -> None:
    with BillingStandIn.start(secret_key=SECRET_KEY, client_id=CLIENT_ID, rate_limit_per_second=4) as stand_in:
        (limit,) = stand_in.faults.active()
        assert (limit.kind, limit.per_second, limit.window, limit.path_prefix) == ("rate", 4, 1.0, "/v1/")


def test_the_console_script_takes_a_rate_limit() -> None:
    script = os.path.join(os.path.dirname(sys.executable), "dps-billing-stand-in")
    process = subprocess.Popen([script, "--port", "0", "--quiet", "--rate-limit-per-second", "1"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        api_url = [process.stdout.readline() for _ in range(2)][1].split()[-1]
        statuses = [requests.get(api_url + "/v1/products", headers={"Authorization": "Bearer sk_test_unknown"},
                                 timeout=10).status_code for _ in range(5)]
        # The first is admitted (then refused as an unknown key); calls within a second of it are not.
        assert statuses[0] == 401 and 429 in statuses
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
