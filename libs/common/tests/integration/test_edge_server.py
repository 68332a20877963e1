"""The server edge as every service runs it, once: the production gunicorn settings
(``dps_common.gunicorn_conf``: the edge worker, two workers, TLS) serving a minimal app on the shared
app builder (``dps_testing.edge_app``), against real slow and malformed clients on real sockets
(``dps_testing.edge_checks``). Each service's suite checks, with one smoke test, that its own server
is behind this edge (``test_*server_edge.py``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dps_testing import edge_app
from dps_testing import edge_checks as edge
from dps_testing.edge_app import HEADERS, HOOKS, THINGS, touched
from dps_testing.processes import gunicorn, write_tls_files
from dps_testing.slow_clients import connect, host_header, read_response


@pytest.fixture(scope="module")
def touches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("edge-app") / "touches"


@pytest.fixture(scope="module")
def ca_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str]]:
    tls = write_tls_files(tmp_path_factory.mktemp("edge-tls"))
    yield tls, tls["ca"]


@pytest.fixture(scope="module")
def origin(ca_file, touches: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tls, _ = ca_file
    env = {**os.environ, edge_app.TOUCHES_ENV: str(touches), "LOG_LEVEL": "WARNING", **edge.TEST_TIMEOUTS_ENV}
    with gunicorn("dps_testing.edge_app:create()", env, tls, tmp_path_factory.mktemp("edge") / "edge.log", workers=2) as url:
        yield url


@pytest.fixture
def ca(ca_file) -> str:
    return str(ca_file[1])


def touch_path(thing: str) -> str:
    return f"{THINGS}/{thing}/touch"


def test_requests_are_answered_while_200_clients_send_their_headers_slowly(origin, ca):
    edge.answered_while_slow_headers(origin, ca, lambda: edge.get(origin, ca, THINGS, HEADERS))


def test_requests_are_answered_while_200_bodies_stall(origin, ca):
    edge.answered_while_stalled_bodies(origin, ca, THINGS, HEADERS, lambda: edge.get(origin, ca, THINGS, HEADERS))


def test_requests_are_answered_while_200_bodies_to_a_public_route_stall(origin, ca):
    edge.answered_while_stalled_bodies(origin, ca, HOOKS, {}, lambda: edge.get(origin, ca, THINGS, HEADERS))


def test_a_head_that_stops_is_answered_408_and_closed(origin, ca):
    edge.slow_head_cut_off(origin, ca, within=10)


def test_heads_that_drip_a_line_at_a_time_are_cut_off(origin, ca):
    edge.dripping_heads_cut_off(origin, ca, within=10)


def test_a_body_that_stops_is_answered_408_and_closed(origin, ca):
    edge.stalled_body_cut_off(origin, ca, THINGS, HEADERS, within=10)


def test_a_public_routes_body_that_stops_is_answered_408_too(origin, ca):
    """A route without a key (a platform's signed webhook) reads its body through the same bounded read."""
    edge.stalled_body_cut_off(origin, ca, HOOKS, {}, within=10)


@pytest.mark.parametrize(
    ("target", "header_lines", "status", "code"),
    [
        (THINGS + "?cursor=" + "c" * 10_000, "", 414, "uri_too_long"),
        (THINGS, "X-Filler: " + "f" * 9_000 + "\r\n", 431, "request_header_fields_too_large"),
        (THINGS, "X-Bad: a\x00b\r\n", 400, "bad_request"),
        (THINGS, "x-api-key: dps_" + "k" * 9_000 + "\r\n", 401, "invalid_api_key"),  # over the header limit
    ],
    ids=["10KB-cursor", "9KB-header", "NUL-in-header", "9KB-key"],
)
def test_errors_the_server_writes_itself_are_problem_details(origin, ca, target, header_lines, status, code):
    document = edge.assert_problem(edge.raw_get(origin, ca, target, header_lines), status, code)
    if status == 401:
        assert document["detail"] == "Invalid API key."


def test_a_chunked_body_over_10_mb_is_413_with_connection_close_and_the_connection_closes(origin, ca):
    edge.chunked_body_over_limit_closes(origin, ca, THINGS, HEADERS)


def test_a_chunked_body_over_10_mb_to_a_route_that_takes_no_body_is_413_and_nothing_is_done(origin, ca, touches):
    thing = uuid.uuid4().hex
    edge.chunked_body_over_limit_closes(origin, ca, touch_path(thing), HEADERS)
    assert touched(touches, thing) == 0


def test_a_chunked_body_over_10_mb_to_a_public_route_is_413_too(origin, ca):
    edge.chunked_body_over_limit_closes(origin, ca, HOOKS, {})


@pytest.mark.parametrize("body", list(edge.MALFORMED_CHUNKED_BODIES.values()), ids=list(edge.MALFORMED_CHUNKED_BODIES))
def test_a_malformed_chunked_body_is_400_and_closed(origin, ca, body):
    edge.malformed_chunked_body_is_400_and_closes(origin, ca, THINGS, HEADERS, body)


def test_a_malformed_chunked_body_to_a_route_that_takes_no_body_is_400_and_nothing_is_done(origin, ca, touches):
    thing = uuid.uuid4().hex
    body = edge.MALFORMED_CHUNKED_BODIES["bad-chunk-size"]
    edge.malformed_chunked_body_is_400_and_closes(origin, ca, touch_path(thing), HEADERS, body)
    assert touched(touches, thing) == 0


def test_a_small_chunked_body_to_a_route_that_takes_no_body_is_read_and_ignored(origin, ca, touches):
    """Within the limit, a body the route does not take changes nothing: the operation runs."""
    thing = uuid.uuid4().hex
    with connect(origin, ca) as sock:
        sock.sendall(edge.chunked_head(origin, touch_path(thing), HEADERS) + b"2\r\n{}\r\n0\r\n\r\n")
        response = read_response(sock)
    assert response.status == 201, response.body[:300]
    assert touched(touches, thing) == 1


def test_a_connection_closes_only_when_told(origin, ca):
    """Keep-alive still works: two requests on one connection, both answered."""
    with connect(origin, ca) as sock:
        for _ in range(2):
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host_header(origin)}\r\n\r\n".encode())
            response = read_response(sock)
            assert response.status == 200 and response.headers["connection"] == "keep-alive"


def test_metrics_add_up_every_worker(origin, ca):
    edge.metrics_add_up_every_worker(origin, ca)
