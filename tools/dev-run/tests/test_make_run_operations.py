"""A plain ``make run`` (two gunicorn workers per service, as the README's command starts them, and every
worker's and relay's metrics server asked for) tried as an attacker and an operator would, in the order
written: at the one address a broken body gets the services' own answers and a stalled one their
deadline; the two workers of a service share one rate-limit budget (the run's Redis); every worker and
relay declares its build on /metrics; a relay killed outright is started again and make run goes on;
the webhook receiver verifies a delivery. The last test stops it with Ctrl-C and reads every line the
run wrote (its output and its log files): no traceback, and none of the credentials the tests sent or
the run holds, but for the banner's own admin key and sign-in link."""

from __future__ import annotations

import collections
import datetime
import http.client
import json
import re
import signal
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import psutil
import pytest
from make_run import REPO, MakeRun
from raw_http import BROKEN, CUT_SHORT, fresh_credentials, raw_send, read_problem, request_head
from standardwebhooks import Webhook

from dps_testing.processes import free_port

METRICS = ("RELAY_METRICS_PORT", "BILLING_RELAY_METRICS_PORT", "WEBHOOK_WORKER_METRICS_PORT", "BILLING_WORKER_METRICS_PORT")
SENT: list[str] = []  # every credential the tests sent: none may appear in a line of the run
RULE = "=" * 96


@pytest.fixture(scope="module")
def run(run_dir, tmp_path_factory):
    ports = {name: str(free_port()) for name in METRICS}
    started = MakeRun(run_dir, tmp_path_factory.mktemp("make-run-operations") / "make-run.log",
                      WEB_CONCURRENCY="2", **ports).start()
    started.wait_ready()
    yield started
    started.kill_everything()


def _address(run: MakeRun) -> str:
    return f"127.0.0.1:{run.env['PORT']}"


def _admin_key(run: MakeRun) -> str:
    return re.search(r"^   admin API key +(dps_\S+)$", run.wait_ready(), re.MULTILINE).group(1)


def test_the_reported_case_and_every_broken_framing_get_the_services_400_at_the_one_address(run):
    """``POST /external/v1/opportunities`` with the admin key and the chunk ``zz`` (the case that wrote
    the key to the log), and the other broken framings: the api's own 400 malformed_body, problem+json,
    the connection closed; never the empty 502 of before."""
    key = _admin_key(run)
    SENT.append(key)
    for name, body in BROKEN.items():
        answer = raw_send(_address(run), request_head("/external/v1/opportunities", {"x-api-key": key}), body,
                          until_closed=True)
        status, headers, problem = read_problem(answer)
        assert (status, problem["code"], headers["connection"]) == (400, "malformed_body", "close"), (name, answer)
        assert answer.endswith(b"}"), (name, answer)  # and closed: nothing after the answer
    answer = raw_send(_address(run), request_head("/external/v1/opportunities", {"x-api-key": key}), CUT_SHORT,
                      half_close=True)
    assert answer.split(b" ", 2)[1] in (b"400", b"499"), answer  # the client's fault, whoever notices first


def test_a_body_that_stops_gets_the_services_408_and_a_head_that_stops_is_dropped(run):
    key = _admin_key(run)
    head = request_head("/external/v1/opportunities", {"x-api-key": key}, "Content-Length: 1000")
    status, headers, problem = read_problem(raw_send(_address(run), head, b"x" * 31, until_closed=True))
    assert (status, problem["code"], headers["connection"]) == (408, "request_timeout", "close")
    unfinished = b"POST /external/v1/opportunities HTTP/1.1\r\nHost: x\r\nx-api-key: " + key.encode() + b"\r\n"
    assert raw_send(_address(run), unfinished, until_closed=True) == b""  # closed without an answer


def test_the_two_workers_of_a_service_share_one_rate_limit_budget(run):
    """Unauthenticated requests from one client address (127.0.0.9, as the proxy names it) have 60 a
    minute: exactly 60 of 90 sent at once are answered (401) and the rest 429, though both workers of
    the api answered (each process draws its request ids from its own prefix). Counted per process,
    each worker allowed 60."""
    statuses: collections.Counter[int] = collections.Counter()
    workers: set[str] = set()
    lock = threading.Lock()

    def ask() -> None:
        for _ in range(9):
            connection = http.client.HTTPConnection(_address(run), timeout=30, source_address=("127.0.0.9", 0))
            connection.request("GET", "/external/v1/whoami")
            answer = connection.getresponse()
            answer.read()
            connection.close()
            with lock:
                statuses[answer.status] += 1
                workers.add(answer.headers["x-request-id"][:16])

    threads = [threading.Thread(target=ask) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == {401: 60, 429: 30}, statuses
    assert len(workers) >= 2, workers


def test_every_worker_and_relay_declares_its_build_on_metrics(run):
    expected = {"RELAY_METRICS_PORT": "api", "BILLING_RELAY_METRICS_PORT": "billing-connector",
                "WEBHOOK_WORKER_METRICS_PORT": "webhook-dispatcher", "BILLING_WORKER_METRICS_PORT": "billing-connector"}
    for name, service in expected.items():
        with urllib.request.urlopen(f"http://127.0.0.1:{run.env[name]}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        samples = re.findall(r'^dps_build_info\{([^}]*)\} (\S+)$', text, re.MULTILINE)
        assert len(samples) == 1 and f'service="{service}"' in samples[0][0] and float(samples[0][1]) == 1, (name, samples)


def _api_relay(run: MakeRun) -> psutil.Process:
    [relay] = [p for p in run.processes() if "dps-outbox-relay" in " ".join(p.cmdline())
               and p.environ().get("SERVICE_NAME") != "billing-connector"]
    return relay


def test_a_relay_killed_outright_is_started_again_and_make_run_goes_on(run):
    killed = _api_relay(run)
    killed.kill()
    deadline = time.monotonic() + 60
    while "make run: api outbox relay started again" not in run.output:
        assert run.make.poll() is None, run.tail()
        assert time.monotonic() < deadline, run.tail()
        time.sleep(0.3)
    assert "make run: api outbox relay exited with -9; starting it again in 1 s" in run.output
    assert _api_relay(run).pid != killed.pid
    while True:  # its metrics server is back: the new relay runs
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{run.env['RELAY_METRICS_PORT']}/healthz", timeout=5) as health:
                assert health.status == 200
                break
        except OSError:
            assert time.monotonic() < deadline, run.tail()
            time.sleep(0.3)
    assert run.make.poll() is None


def test_requests_carrying_credentials_to_every_service_and_the_receiver(run, tmp_path):
    """What an attacker and the README's user send, each with fresh credentials: broken bodies to the
    console's sign-in link and the billing callback (query tokens), well-formed requests with a wrong
    cookie, CSRF token, signature or ticket to each service, and a signed delivery to the receiver."""
    address = _address(run)
    token, ticket, state, code = "tok" + "A" * 30, "tkt" + "B" * 30, "stt" + "C" * 30, "cod" + "D" * 30
    SENT.extend([token, ticket, state, code])
    paths = [f"/console/sign-in/link?token={token}",
             f"/external/v1/billing-connection/callback?ticket={ticket}&state={state}&code={code}"]
    for path in paths:
        for body in BROKEN.values():
            headers = fresh_credentials()
            SENT.extend(headers.values())
            raw_send(address, request_head(path, headers), body, until_closed=True)
    for method, path in [("GET", paths[0]), ("GET", paths[1]), ("POST", "/console/sign-in"),
                         ("POST", "/external/v1/billing-platform/webhooks"), ("GET", "/external/v1/whoami"),
                         ("POST", "/external/v1/webhook-configs")]:
        headers = fresh_credentials()
        SENT.extend(headers.values())
        connection = http.client.HTTPConnection(address, timeout=30)
        connection.request(method, path, body=b"{}" if method == "POST" else None,
                           headers={**headers, "content-type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        assert answer.status < 500, (method, path, answer.status)
    secret = "whsec_" + "c2VjcmV0LXNpZ25pbmcta2V5LW9mLXRoZS10ZXN0"
    receiver_port = free_port()
    receiver_log = run.run_dir / "receiver.log"  # searched with the run's logs
    with open(receiver_log, "wb") as out:
        receiver = subprocess.Popen([str(REPO / ".venv/bin/dealpricing-dev"), "receiver", "--port", str(receiver_port),
                                     "--secret", secret], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        body = json.dumps({"type": "quote.approved", "data": {}}).encode()
        stamp = datetime.datetime.now(datetime.UTC)
        signature = Webhook(secret).sign("msg_test0001", stamp, body.decode())
        SENT.extend([secret, signature.split(",", 1)[1]])
        while True:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{receiver_port}/hooks", data=body, method="POST",
                    headers={"webhook-id": "msg_test0001", "webhook-timestamp": str(int(stamp.timestamp())),
                             "webhook-signature": signature, "content-type": "application/json"})
                with urllib.request.urlopen(request, timeout=5) as delivered:
                    assert delivered.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline and receiver.poll() is None, receiver_log.read_text()
                time.sleep(0.2)
    finally:
        receiver.send_signal(signal.SIGINT)
        receiver.wait(timeout=10)
    assert "verified  quote.approved" in receiver_log.read_text()


def test_ctrl_c_stops_it_and_no_line_the_run_wrote_holds_a_traceback_or_a_credential(run):
    """Every line: the output of make run (every process's, the proxy's included) and every log file
    in the run folder (PostgreSQL's, Redis's, the receiver's); the credentials the tests sent, and the
    run's own secrets (.run/secrets.env, the demo key, the banner's sign-in token), which may appear
    in the banner's lines only."""
    banner = run.wait_ready()
    run.signal_group(signal.SIGINT)  # Ctrl-C in the terminal
    run.wait_gone()
    output = run.output
    assert "Traceback" not in output and "failed with SystemExit" not in output and "Exception ignored" not in output, \
        [line for line in output.splitlines() if "Traceback" in line or "Exception" in line][:5]
    run_secrets = [line.split("=", 1)[1] for path in ("secrets.env", "demo-key.env")
                   for line in (run.run_dir / path).read_text().splitlines() if "=" in line and not line.startswith("#")]
    sign_in = re.search(r"sign-in/link\?token=(\S+)", banner).group(1)
    secrets = {value for value in [*SENT, *run_secrets, urllib.parse.unquote(sign_in)] if len(value) >= 16}
    assert len(secrets) > 40, secrets  # the tests above sent theirs
    banner_lines = set(banner.split(RULE)[0].splitlines())  # from "Deal Pricing Service is up" to its closing rule
    lines = [(path.name, line) for path in sorted(run.run_dir.glob("*.log"))
             for line in path.read_text(errors="replace").splitlines()]
    lines += [("output", line) for line in output.splitlines() if line not in banner_lines]
    assert len(lines) > 100, len(lines)  # (about 280: the search is not of an empty log)
    found = [(where, secret[:12] + "…", line[:300]) for where, line in lines for secret in secrets if secret in line]
    assert not found, found
    assert any(secret in line for line in banner_lines for secret in secrets)  # the banner's own, shown there
