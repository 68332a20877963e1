"""The control page of make run (uninstall button), request recordings, and the console script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import requests

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import Api, connect


def test_the_control_page_lists_installs_and_uninstalls(stand_in: BillingStandIn) -> None:
    account = connect(stand_in)["stripe_user_id"]
    page = requests.get(stand_in.dashboard_url + "/", timeout=10)
    assert page.status_code == 200 and account in page.text and stand_in.api_url in page.text
    answer = requests.post(f"{stand_in.api_url}/accounts/{account}/uninstall", allow_redirects=False, timeout=10)
    assert answer.status_code == 303 and stand_in.installed_accounts() == []
    assert stand_in.wait_for_webhooks()[-1].event_type == "account.application.deauthorized"
    again = requests.post(f"{stand_in.api_url}/accounts/{account}/uninstall", allow_redirects=False, timeout=10)
    assert again.status_code == 404


def test_recordings_hold_the_exact_request_and_answer(api: Api, stand_in: BillingStandIn,
                                                      grant: dict[str, Any]) -> None:
    api.post("/v1/products", "name=Widget&metadata%5Bk%5D=v", key="k-1",
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    [recorded] = stand_in.requests(path_prefix="/v1/prod")
    assert recorded.method == "POST" and recorded.path == "/v1/products"
    assert recorded.raw_body == b"name=Widget&metadata%5Bk%5D=v"
    assert recorded.form == {"name": "Widget", "metadata": {"k": "v"}}
    assert recorded.headers["Authorization"] == f"Bearer {grant['access_token']}"
    assert recorded.idempotency_key == "k-1" and recorded.account == grant["stripe_user_id"]
    assert recorded.status == 200 and recorded.response["name"] == "Widget"
    assert recorded.response_headers["Request-Id"] == recorded.request_id
    stand_in.clear_requests()
    assert stand_in.requests() == []


def test_the_console_script_prints_its_urls_and_serves() -> None:
    script = os.path.join(os.path.dirname(sys.executable), "dps-billing-stand-in")
    process = subprocess.Popen(
        [script, "--port", "0", "--quiet", "--redirect-uri", "http://127.0.0.1:9/cb", "--latency-ms", "1"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        assert "stand-in" in lines[0]
        api_url = lines[1].split()[-1]
        assert lines[1].split()[0] == "BILLING_API_URL" and api_url.startswith("http://127.0.0.1:")
        assert lines[2].split()[0] == "BILLING_MARKETPLACE_URL"
        answer = requests.get(api_url + "/v1/products", timeout=10)
        assert answer.status_code == 401 and answer.headers["Request-Id"].startswith("req_")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
