"""The api as deployed: gunicorn with the production settings (``dps_common.gunicorn_conf``, two
workers, TLS) puts it behind the server edge, whose whole suite runs once on a minimal app
(libs/common/tests/integration/test_edge_server.py): here one smoke test that the api's server is that
edge, and what is the api's own there (its idempotency middleware reading a keyed body, its
authenticator, its document)."""

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
        **edge.SMOKE_TIMEOUTS_ENV,
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
    admin = Admin(server_env)
    return admin.member(admin.create_org("Edge Co")["id"], "admin", "admin@edge-co.example").headers


def test_the_api_is_served_behind_the_edge(origin, ca, key_headers, draft_quote):
    """A head that stops is the edge's 408; a chunked body over 10 MB to a route that takes none (the
    submission) is 413 before the operation runs: the quote stays a DRAFT."""
    edge.slow_head_cut_off(origin, ca[1], within=5)
    edge.chunked_body_over_limit_closes(origin, ca[1], f"{QUOTES}/{draft_quote}/approval", key_headers)
    assert quote_status(origin, ca[1], key_headers, draft_quote) == "DRAFT"


def test_a_keyed_post_whose_body_stops_is_answered_408_too(origin, ca, key_headers):
    """The idempotency middleware reads the body first, through the same bounded read."""
    edge.stalled_body_cut_off(origin, ca[1], PRODUCTS, {**key_headers, "Idempotency-Key": "edge-stall-1"}, within=5)


def test_a_key_under_the_header_limit_is_the_apps_401(origin, ca):
    """A 4 KB key passes the server (under its header limit) and the api's authenticator refuses it."""
    document = edge.assert_problem(edge.raw_get(origin, ca[1], WHOAMI, "x-api-key: dps_" + "k" * 4_000 + "\r\n"),
                                   401, "invalid_api_key")
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
