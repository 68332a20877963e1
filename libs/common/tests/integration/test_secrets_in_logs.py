"""The log side of the secrets scan: a process's output and an in-process server's log records land
in the stack's log folder, and the scan names the file, the line and the secret's label (never the
secret); what the suite's clients are shown is gathered from the answers themselves."""

from __future__ import annotations

import logging
import subprocess
import sys

import requests

from dps_testing.issued_secrets import API_KEY, BILLING_TICKET, COOKIE, OAUTH_CODE, SIGNING_SECRET, IssuedSecrets
from dps_testing.stack_logs import LogFinding, StackLogs, scan_logs

KEY = "dps_AbCdEf12_s3cretPartOfTheKey0123456789"


def test_the_scan_finds_a_secret_in_a_process_output_and_in_captured_records(tmp_path):
    logs = StackLogs(tmp_path / "logs")
    with open(logs.path("worker"), "wb") as out:
        subprocess.run([sys.executable, "-c", f"print('starting'); print('key {KEY}')"], stdout=out, check=True)
    with logs.capture("stand-in", "test.stand_in"):
        logging.getLogger("test.stand_in").info("GET /authorize?state=%s", "whsec_planted0123456789")
    logging.getLogger("test.stand_in").info("after: whsec_planted0123456789")  # no longer captured
    report = scan_logs(logs.files(), {"key #1": KEY.split("_", 2)[2], "secret #1": "whsec_planted0123456789",
                                      "absent #1": "never-written-anywhere"})
    assert report.files == {"stand-in.log": 1, "worker.log": 2}
    assert sorted(report.found, key=lambda f: f.file) == [
        LogFinding("stand-in.log", 1, "secret #1"), LogFinding("worker.log", 2, "key #1")]
    assert logs.path("worker").name == "worker-2.log"  # a second process of that name gets its own file


def _answer(url: str, status: int = 200, body: bytes = b"", headers: dict[str, str] | None = None,
            cookies: dict[str, str] | None = None) -> requests.Response:
    """An answer as requests' adapter builds it (its cookie jar filled from Set-Cookie)."""
    response = requests.Response()
    response.status_code, response._content, response.url = status, body, url
    response.headers.update(headers or {})
    for name, value in (cookies or {}).items():
        response.cookies.set(name, value)
    response.request = requests.Request("GET", url).prepare()
    return response


def test_the_secrets_shown_are_gathered_from_the_answers():
    issued, session = IssuedSecrets(), requests.Session()
    issued.watch(session)
    [harvest] = session.hooks["response"]
    harvest(_answer("https://x/webhook-configs", 201, b'{"secret": "whsec_abcdefgh", "nested": {"secret": "' +
                    KEY.encode() + b'"}}', {"Content-Type": "application/json"}))
    harvest(_answer("https://x/billing-connection/authorize", 200,
                    b'{"startUrl": "https://x/billing-connection/start?ticket=T1cket0123456"}',
                    {"Content-Type": "application/json"}))
    harvest(_answer("https://x/billing-connection/start?ticket=T1cket0123456", 303,
                    headers={"Location": "https://p/authorize?state=St4te0123456&client_id=ca_x"},
                    cookies={"dps_billing_connect": "N0nce0123456"}))
    harvest(_answer("https://console/settings?billing=error&code=state_expired_reason"))  # a reason, no secret
    harvest(_answer("https://x/billing-connection/callback?code=ac_C0de0123456&state=St4te0123456"))
    assert issued.by_kind() == {
        SIGNING_SECRET: {"whsec_abcdefgh"}, API_KEY: {KEY.split("_", 2)[2]}, BILLING_TICKET: {"T1cket0123456"},
        "OAuth state": {"St4te0123456"}, COOKIE: {"N0nce0123456"}, OAUTH_CODE: {"ac_C0de0123456"},
    }
    assert set(issued.labelled()) == {f"{kind} #1" for kind in issued.by_kind()}
