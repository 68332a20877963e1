"""What make run's proxy answers and logs itself (``dps_dev.proxy_answers``), Caddy run on the runner's
config: a broken chunked body gets the services' own ``400 malformed_body`` and the connection closes,
a service that does not listen is ``503`` problem+json with ``Retry-After``, and no credential a request
carried (headers, cookies, signatures, a query's tokens) reaches any line of its log."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

import pytest
from caddy_proxy import echo_upstreams, running_caddy
from raw_http import BROKEN, CUT_SHORT, fresh_credentials, raw_send, read_problem, request_head

from dps_common.edge.reading import ReadTimeouts
from dps_testing.processes import free_port

from dps_dev.proxy import BACKENDS, HEADER_SECONDS, IDLE_SECONDS, caddy_config, ingress_routes
from dps_dev.proxy_answers import error_routes

DOWN = "dps-billing-connector"  # in the test's proxy, nothing listens where this one should


@pytest.fixture
def proxy(tmp_path):
    with echo_upstreams() as upstreams:
        upstreams[DOWN] = f"127.0.0.1:{free_port()}"
        with running_caddy(tmp_path, upstreams) as (address, log_path):
            yield address, log_path


@pytest.mark.parametrize("framing", list(BROKEN), ids=list(BROKEN))
def test_a_broken_chunked_body_is_the_services_400_and_the_connection_closes(proxy, framing):
    address, _ = proxy
    answer = raw_send(address, request_head("/external/v1/opportunities", {"x-api-key": "dps_x_y"}), BROKEN[framing],
                   until_closed=True)
    status, headers, problem = read_problem(answer)
    assert (status, problem["status"], problem["code"]) == (400, 400, "malformed_body"), answer
    assert problem["type"] == "https://errors.dealpricing.example/malformed_body"
    assert headers["connection"] == "close" and problem["requestId"] == headers["x-request-id"]
    assert answer.count(b"HTTP/1.1 ") == 1, "the rest of the broken body was read as another request"


def test_a_body_the_client_ends_early_is_a_client_error(proxy):
    address, _ = proxy
    for _ in range(5):
        answer = raw_send(address, request_head("/external/v1/opportunities", {}), CUT_SHORT, half_close=True)
        status = int(answer.split(b" ", 2)[1])
        assert status in (400, 499), answer
        if status == 400:
            assert read_problem(answer)[2]["code"] == "malformed_body"


def test_a_service_that_does_not_listen_is_503_with_retry_after(proxy):
    address, _ = proxy
    status, headers, problem = read_problem(raw_send(address, request_head("/external/v1/billing-connection", {}, "Content-Length: 2"),
                                              b"{}"))
    assert (status, problem["code"], headers["retry-after"]) == (503, "service_unavailable", "1")


def test_no_credential_a_request_carried_reaches_the_proxys_log(proxy):
    """The reported case (an API key with a broken chunked body, which Caddy used to log with every
    header but Cookie and Authorization), and the rest: every credential header, and the tokens of
    the sign-in link and the billing flow in the query, with a broken body and to a service that is
    down (the answers Caddy logs at ERROR), then every line of the log is searched for them."""
    address, log_path = proxy
    sent: list[str] = []
    token, ticket, state, code = (secrets.token_urlsafe(24) for _ in range(4))
    sent += [token, ticket, state, code]
    paths = [
        "/external/v1/opportunities",
        f"/console/sign-in/link?token={token}",
        f"/external/v1/billing-connection/callback?ticket={ticket}&state={state}&code={code}",
    ]
    for path in paths:
        for body in [*BROKEN.values(), CUT_SHORT]:
            headers = fresh_credentials()
            sent += list(headers.values())
            raw_send(address, request_head(path, headers), body, half_close=body == CUT_SHORT)
    headers = fresh_credentials()
    sent += list(headers.values())
    status, _, _ = read_problem(raw_send(address, request_head(paths[2], headers, "Content-Length: 2"), b"{}"))
    assert status == 503
    lines = log_path.read_text().splitlines()
    assert any('"status":503' in line and "/billing-connection/callback?(query not logged)" in line
               for line in lines), lines  # the 503 was logged: the search below is not of an empty log
    secret_parts = {part for value in sent for part in re.split(r"[ ,;=]", value) if len(part) >= 16}
    found = [(secret, line) for line in lines for secret in secret_parts if secret in line]
    assert not found, found


def test_every_error_answer_is_a_problem_document_once_caddy_fills_it_in():
    """Each error route's document is valid JSON with the services' fields, whatever the placeholders."""
    filled = {"{http.request.uuid}": "0b7e8c1e-5d3c-4a4e-9a36-9d7f2b1c0e11", "{http.error.status_code}": "418",
              "{http.error.status_text}": "I'm a teapot"}
    for route in error_routes():
        [answer] = [handler for handler in route["handle"] if handler["handler"] == "static_response"]
        body = answer["body"]
        for placeholder, value in filled.items():
            body = body.replace(placeholder, value)
        assert "{http." not in body, body
        problem = json.loads(body)
        assert set(problem) == {"type", "title", "status", "detail", "code", "requestId"}
        assert problem["type"] == "https://errors.dealpricing.example/" + problem["code"]
        assert str(problem["status"]) == str(answer["status_code"]).replace("{http.error.status_code}", "418")


def test_the_proxys_deadlines_are_the_services(tmp_path):
    from dps_common import gunicorn_conf

    upstreams = {name: "127.0.0.1:1" for name in BACKENDS}
    server = caddy_config("127.0.0.1:1", upstreams, ingress_routes(), Path(tmp_path))["apps"]["http"]["servers"]["dps"]
    assert server["read_header_timeout"] == f"{HEADER_SECONDS}s" and HEADER_SECONDS == ReadTimeouts().header_seconds
    assert server["idle_timeout"] == f"{IDLE_SECONDS}s" and IDLE_SECONDS == gunicorn_conf.keepalive
