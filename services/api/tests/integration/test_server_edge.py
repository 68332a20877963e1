"""The api as deployed: gunicorn with the production settings (``dps_common.gunicorn_conf``, two
workers, TLS), against real slow and malformed clients on real sockets (``dps_testing.edge_checks``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import requests

from dps_testing import edge_checks as edge
from dps_testing.processes import gunicorn, write_tls_files
from dps_testing.provisioning import Admin
from dps_testing.rate_limits import UNTHROTTLED

PEPPER = "edge-test-pepper-0123456789abcdef0123456789abcdef"
WHOAMI = "/external/v1/whoami"
PRODUCTS = "/external/v1/products"
QUOTES = "/external/v1/pricing-quotes"


@pytest.fixture(scope="module")
def server_env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_KEY_PEPPER": PEPPER,
        "CURSOR_SECRET": "edge-test-cursor-0123456789abcdef0123456789",
        "LOG_LEVEL": "WARNING",
        **edge.TEST_TIMEOUTS_ENV,
        **UNTHROTTLED,  # hundreds of requests under one key within a second; budgets: test_rate_limits
    }


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str]]:
    tls = write_tls_files(tmp_path_factory.mktemp("edge-tls"))
    yield tls, tls["ca"]


@pytest.fixture(scope="module")
def origin(server_env: dict[str, str], ca, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tls, _ = ca
    with gunicorn("dps_api.wsgi:create()", server_env, tls, tmp_path_factory.mktemp("edge") / "api.log", workers=2) as url:
        yield url


@pytest.fixture(scope="module")
def key_headers(server_env: dict[str, str]) -> dict[str, str]:
    return Admin(server_env).organization("Edge Co").admin.headers


def test_requests_are_answered_while_200_clients_send_their_headers_slowly(origin, ca, key_headers):
    _, ca_file = ca
    edge.answered_while_slow_headers(origin, ca_file, lambda: edge.get(origin, ca_file, WHOAMI, key_headers))


def test_requests_are_answered_while_200_bodies_stall(origin, ca, key_headers):
    _, ca_file = ca
    edge.answered_while_stalled_bodies(
        origin, ca_file, PRODUCTS, key_headers, lambda: edge.get(origin, ca_file, PRODUCTS + "?limit=5", key_headers)
    )


def test_a_head_that_stops_is_answered_408_and_closed(origin, ca):
    edge.slow_head_cut_off(origin, ca[1], within=10)


def test_heads_that_drip_a_line_at_a_time_are_cut_off(origin, ca):
    edge.dripping_heads_cut_off(origin, ca[1], within=10)


def test_a_body_that_stops_is_answered_408_and_closed(origin, ca, key_headers):
    edge.stalled_body_cut_off(origin, ca[1], PRODUCTS, key_headers, within=10)


def test_a_keyed_post_whose_body_stops_is_answered_408_too(origin, ca, key_headers):
    """The idempotency middleware reads the body first, through the same bounded read."""
    edge.stalled_body_cut_off(origin, ca[1], PRODUCTS, {**key_headers, "Idempotency-Key": "edge-stall-1"}, within=10)


@pytest.mark.parametrize(
    ("target", "header_lines", "status", "code"),
    [
        (PRODUCTS + "?cursor=" + "c" * 10_000, "", 414, "uri_too_long"),
        (WHOAMI, "X-Filler: " + "f" * 9_000 + "\r\n", 431, "request_header_fields_too_large"),
        (WHOAMI, "X-Bad: a\x00b\r\n", 400, "bad_request"),
        (WHOAMI, "x-api-key: dps_" + "k" * 4_000 + "\r\n", 401, "invalid_api_key"),  # under the header limit: the app
        (WHOAMI, "x-api-key: dps_" + "k" * 9_000 + "\r\n", 401, "invalid_api_key"),  # over it: the server
    ],
    ids=["10KB-cursor", "9KB-header", "NUL-in-header", "4KB-key", "9KB-key"],
)
def test_errors_the_server_writes_itself_are_problem_details(origin, ca, target, header_lines, status, code):
    document = edge.assert_problem(edge.raw_get(origin, ca[1], target, header_lines), status, code)
    if status == 401:
        assert document["detail"] == "Invalid API key."


def test_the_document_lists_the_answers_the_server_writes_itself(origin, ca):
    """414 and 431 (and 408, 413) are answered on every route, before the app: the document says so."""
    document = edge.get(origin, ca[1], "/external/v1/openapi.json").json()
    for target, header_lines, status in [(PRODUCTS + "?cursor=" + "c" * 10_000, "", 414),
                                         (WHOAMI, "X-Filler: " + "f" * 9_000 + "\r\n", 431)]:
        answer = edge.raw_get(origin, ca[1], target, header_lines)
        path = target.split("?")[0].removeprefix("/external/v1")
        documented = document["paths"][path]["get"]["responses"].get(str(answer.status))
        assert answer.status == status and documented is not None, (target[:40], answer.status)
        assert answer.headers["content-type"] in documented["content"]
    for item in document["paths"].values():
        for op in item.values():
            assert {"408", "413", "414", "431"} <= set(op["responses"]), op["operationId"]


def test_a_chunked_body_over_10_mb_is_413_with_connection_close_and_the_connection_closes(origin, ca, key_headers):
    edge.chunked_body_over_limit_closes(origin, ca[1], PRODUCTS, key_headers)


@pytest.fixture
def draft_quote(origin, ca, key_headers) -> str:
    """A DRAFT quote with one line, which a submission would approve at once (no rule fires)."""
    def post(path: str, body: dict[str, object]) -> dict[str, object]:
        with requests.Session() as session:
            session.trust_env = False
            resp = session.post(origin + path, json=body, headers=key_headers, verify=ca[1], timeout=10)
        assert resp.status_code == 201, resp.text
        return resp.json()

    product = post(PRODUCTS, {"specId": f"SKU-{uuid.uuid4().hex[:8]}", "name": "Seat", "priceModel": "PER_UNIT",
                              "priceFrequency": "MONTHLY", "listPrices": {"USD": "100.00"}})
    quote = post(QUOTES, {"name": "Edge renewal", "currency": "USD", "billingFrequency": "MONTHLY",
                          "subscriptionTermMonths": 12, "lines": [{"productId": product["id"], "quantity": "1"}]})
    return str(quote["id"])


def quote_status(origin: str, ca_file: str, key_headers: dict[str, str], quote_id: str) -> str:
    resp = edge.get(origin, ca_file, f"{QUOTES}/{quote_id}", key_headers)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["status"])


def test_a_chunked_body_over_10_mb_to_a_route_that_takes_no_body_is_413_and_nothing_is_done(
    origin, ca, key_headers, draft_quote
):
    """``POST /pricing-quotes/{id}/approval`` reads no body; the limit holds there too, before the
    submission runs (the quote stays a DRAFT)."""
    edge.chunked_body_over_limit_closes(origin, ca[1], f"{QUOTES}/{draft_quote}/approval", key_headers)
    assert quote_status(origin, ca[1], key_headers, draft_quote) == "DRAFT"


@pytest.mark.parametrize("body", list(edge.MALFORMED_CHUNKED_BODIES.values()), ids=list(edge.MALFORMED_CHUNKED_BODIES))
def test_a_malformed_chunked_body_is_400_and_closed(origin, ca, key_headers, body):
    edge.malformed_chunked_body_is_400_and_closes(origin, ca[1], PRODUCTS, key_headers, body)


def test_a_malformed_chunked_body_to_a_route_that_takes_no_body_is_400_and_nothing_is_done(
    origin, ca, key_headers, draft_quote
):
    body = edge.MALFORMED_CHUNKED_BODIES["bad-chunk-size"]
    edge.malformed_chunked_body_is_400_and_closes(origin, ca[1], f"{QUOTES}/{draft_quote}/approval", key_headers, body)
    assert quote_status(origin, ca[1], key_headers, draft_quote) == "DRAFT"


def test_a_small_chunked_body_to_a_route_that_takes_no_body_is_read_and_ignored(origin, ca, key_headers, draft_quote):
    """Within the limit, a body the route does not take changes nothing: the submission runs."""
    from dps_testing.slow_clients import connect, read_response

    with connect(origin, ca[1]) as sock:
        sock.sendall(edge.chunked_head(origin, f"{QUOTES}/{draft_quote}/approval", key_headers) + b"2\r\n{}\r\n0\r\n\r\n")
        response = read_response(sock)
    assert response.status == 201, response.body[:300]
    assert quote_status(origin, ca[1], key_headers, draft_quote) == "APPROVED"


def test_a_connection_closes_only_when_told(origin, ca, key_headers):
    """Keep-alive still works: two requests on one connection, both answered."""
    from dps_testing.slow_clients import connect, host_header, read_response

    with connect(origin, ca[1]) as sock:
        for _ in range(2):
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host_header(origin)}\r\n\r\n".encode())
            response = read_response(sock)
            assert response.status == 200 and response.headers["connection"] == "keep-alive"


def test_metrics_add_up_every_worker(origin, ca):
    edge.metrics_add_up_every_worker(origin, ca[1])
