"""The server-edge checks, run against gunicorn with the production settings (``processes.gunicorn``):
in full once, on a minimal app (libs/common/tests/integration/test_edge_server.py), and as each
service's smoke test on its own server. Slow clients do not starve it, the server's own errors are problem+json,
``Connection: close`` means it, and ``/metrics`` adds up every worker. Each check asserts what a
client sees; none asserts a timing (latencies are measured in ``bench/slow_clients.py``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import requests
from prometheus_client.parser import text_string_to_metric_families

from dps_testing.slow_clients import (
    RawResponse,
    closed_by_peer,
    connect,
    exchange,
    host_header,
    read_response,
    slow_headers,
    stalled_bodies,
)

# The deadlines the suites give their servers (short, so the checks are quick)
TEST_TIMEOUTS_ENV = {"HTTP_HEADER_TIMEOUT_SECONDS": "5", "HTTP_BODY_IDLE_TIMEOUT_SECONDS": "2"}
# A service's smoke test only needs to see the edge answer (no slow clients held beside it): shorter still
SMOKE_TIMEOUTS_ENV = {"HTTP_HEADER_TIMEOUT_SECONDS": "1", "HTTP_BODY_IDLE_TIMEOUT_SECONDS": "1"}
ANSWER_TIMEOUT = 5.0  # a client's patience: far above the server's latency, far below the slow clients' hold
SLOW_CLIENTS = 200
LEGITIMATE_REQUESTS = 5
PROBLEM_FIELDS = {"type", "title", "status", "detail", "code"}


def get(origin: str, ca_file: str, path: str, headers: dict[str, str] | None = None) -> requests.Response:
    """One request on a new connection, as a new client would send it."""
    with requests.Session() as session:
        session.trust_env = False
        return session.get(origin + path, headers=headers or {}, verify=ca_file, timeout=ANSWER_TIMEOUT)


def answered_while_slow_headers(origin: str, ca_file: str, ask: Callable[[], requests.Response]) -> None:
    """``SLOW_CLIENTS`` connections drip header lines; each of a few legitimate requests is answered
    (within ``ANSWER_TIMEOUT``) while most of them are still connected."""
    with slow_headers(origin, ca_file, "/healthz", SLOW_CLIENTS, interval=1.0) as slow:
        statuses = [ask().status_code for _ in range(LEGITIMATE_REQUESTS)]
        still_open = slow.open_count()
    assert all(status < 500 for status in statuses), statuses
    assert still_open >= SLOW_CLIENTS // 2, f"only {still_open} slow clients were still connected: the check proves nothing"


def answered_while_stalled_bodies(
    origin: str, ca_file: str, path: str, headers: dict[str, str], ask: Callable[[], requests.Response]
) -> None:
    """``SLOW_CLIENTS`` requests stop after one byte of their body; legitimate requests are answered."""
    with stalled_bodies(origin, ca_file, path, SLOW_CLIENTS, headers) as _stalled:
        statuses = [ask().status_code for _ in range(LEGITIMATE_REQUESTS)]
    assert all(status < 500 for status in statuses), statuses


def slow_head_cut_off(origin: str, ca_file: str, within: float) -> RawResponse:
    """A request whose head stops after one header line: answered 408 and closed within ``within`` s."""
    with connect(origin, ca_file) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host_header(origin)}\r\n".encode())
        response = read_response(sock, timeout=within)
        assert closed_by_peer(sock, within=within), "the connection stayed open after the 408"
    assert_problem(response, 408, "request_timeout")
    return response


def dripping_heads_cut_off(origin: str, ca_file: str, within: float) -> None:
    """Connections that keep sending a header line every half second are still cut off."""
    with slow_headers(origin, ca_file, "/healthz", 5, interval=0.5) as slow:
        deadline = time.monotonic() + within
        while slow.open_count() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert slow.open_count() == 0, "dripping clients were never cut off"


def stalled_body_cut_off(origin: str, ca_file: str, path: str, headers: dict[str, str], within: float) -> RawResponse:
    """A body that stops after one byte: answered 408 (problem+json, ``Connection: close``) and closed."""
    with stalled_bodies(origin, ca_file, path, 1, headers) as (sock,):
        response = read_response(sock, timeout=within)
        assert closed_by_peer(sock, within=within), "the connection stayed open after the 408"
    assert_problem(response, 408, "request_timeout")
    assert response.headers.get("connection", "").lower() == "close"
    return response


def assert_problem(response: RawResponse, status: int, code: str) -> dict[str, object]:
    assert response.status == status, (response.status, response.body[:300])
    assert response.headers.get("content-type", "").startswith("application/problem+json"), response.headers
    document: dict[str, object] = json.loads(response.body)
    assert PROBLEM_FIELDS <= document.keys(), document
    assert document["status"] == status and document["code"] == code, document
    assert str(document["type"]).startswith("https://errors.dealpricing.example/"), document
    return document


def raw_get(origin: str, ca_file: str, target: str, header_lines: str = "") -> RawResponse:
    """``GET target`` with extra raw header lines (each ending in CRLF), on a new connection."""
    request = f"GET {target} HTTP/1.1\r\nHost: {host_header(origin)}\r\n{header_lines}Connection: close\r\n\r\n"
    return exchange(origin, ca_file, request.encode("latin-1"))


def chunked_body_over_limit_closes(origin: str, ca_file: str, path: str, headers: dict[str, str]) -> RawResponse:
    """A chunked body past 10 MB: 413 with ``Connection: close``, then the server closes, so a client
    that would reuse the connection does not (and a second request on it gets no answer). On a route
    that takes no body too: the server reads it to know its size, and refuses it before the operation."""
    head = chunked_head(origin, path, headers)
    chunk = b"%x\r\n%s\r\n" % (64 * 1024, b" " * (64 * 1024))
    with connect(origin, ca_file, timeout=30) as sock:
        sock.sendall(head)
        try:
            for _ in range(10 * 16 + 2):  # 10 MB and two chunks more
                sock.sendall(chunk)
            sock.sendall(b"0\r\n\r\n" + f"GET /healthz HTTP/1.1\r\nHost: {host_header(origin)}\r\n\r\n".encode())
        except OSError:
            pass  # the server answered and closed before the rest was sent: read the answer below
        response = read_response(sock, timeout=15)
        assert closed_by_peer(sock, within=10), "the server kept the connection open after its 413"
    assert_problem(response, 413, "payload_too_large")
    assert response.headers.get("connection", "").lower() == "close", response.headers
    return response


def chunked_head(origin: str, path: str, headers: dict[str, str]) -> bytes:
    extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host_header(origin)}\r\nContent-Type: application/json\r\n"
        f"Transfer-Encoding: chunked\r\n{extra}\r\n"
    ).encode()


# Chunked bodies whose framing is broken: the server cannot tell where they end. (A body cut short by
# the client closing its side is one too, but over TLS a client that half-closes cannot read the answer:
# libs/common/tests/integration/test_edge.py checks that case on the worker's body stream.)
MALFORMED_CHUNKED_BODIES = {
    "bad-chunk-size": b"zz\r\n{}\r\n0\r\n\r\n",
    "missing-chunk-terminator": b"2\r\n{}XX0\r\n\r\n",
    "bad-trailer": b"2\r\n{}\r\n0\r\nno colon here\r\n\r\n",
}


def malformed_chunked_body_is_400_and_closes(
    origin: str, ca_file: str, path: str, headers: dict[str, str], body: bytes
) -> RawResponse:
    """A chunked body whose framing is broken: 400 ``malformed_body`` with ``Connection: close`` (not a
    500), and the server closes the connection (where a next request would start is unknown)."""
    with connect(origin, ca_file, timeout=15) as sock:
        sock.sendall(chunked_head(origin, path, headers) + body)
        response = read_response(sock, timeout=15)
        assert closed_by_peer(sock, within=10), "the server kept the connection open after its 400"
    assert_problem(response, 400, "malformed_body")
    assert response.headers.get("connection", "").lower() == "close", response.headers
    return response


def request_counts(origin: str, ca_file: str, route: str) -> float:
    """The sum of ``dps_http_requests_total`` for ``route`` over every label, as one scrape reads it."""
    resp = get(origin, ca_file, "/metrics")
    resp.raise_for_status()
    total = 0.0
    for family in text_string_to_metric_families(resp.text):
        for sample in family.samples:
            if sample.name == "dps_http_requests_total" and sample.labels.get("route") == route:
                total += sample.value
    return total


def metrics_add_up_every_worker(origin: str, ca_file: str, requests_sent: int = 40) -> None:
    """``requests_sent`` requests on new connections (gunicorn spreads them over its workers), then
    every scrape, whichever worker answers it, counts all of them."""
    before = request_counts(origin, ca_file, "/healthz")
    for _ in range(requests_sent):
        assert get(origin, ca_file, "/healthz").status_code == 200
    scraped = [request_counts(origin, ca_file, "/healthz") - before for _ in range(6)]
    assert scraped == [requests_sent] * len(scraped), scraped
