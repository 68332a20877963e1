"""The connector's HTTP side as deployed: gunicorn with the production settings (two workers, TLS),
against real slow and malformed clients on real sockets (``dps_testing.edge_checks``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from dps_testing import edge_checks as edge
from dps_testing.processes import gunicorn, write_tls_files

CONNECTION = "/external/v1/billing-connection"
PLATFORM_WEBHOOKS = "/external/v1/billing-platform/webhooks"  # public: the body is read to check its signature


@pytest.fixture(scope="module")
def ca_and_tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return write_tls_files(tmp_path_factory.mktemp("billing-edge-tls"))


@pytest.fixture(scope="module")
def origin(settings_env: dict[str, str], ca_and_tls: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {**os.environ, **settings_env, **edge.TEST_TIMEOUTS_ENV}
    log = tmp_path_factory.mktemp("billing-edge") / "connector.log"
    with gunicorn("dps_billing.wsgi:create()", env, ca_and_tls, log, workers=2) as url:
        yield url


@pytest.fixture(scope="module")
def admin_headers(fake_api) -> dict[str, str]:
    return {"x-api-key": fake_api.organization().admin.key}


def test_requests_are_answered_while_200_clients_send_their_headers_slowly(origin, ca_and_tls, admin_headers):
    ca = ca_and_tls["ca"]
    edge.answered_while_slow_headers(origin, ca, lambda: edge.get(origin, ca, CONNECTION, admin_headers))


def test_requests_are_answered_while_200_bodies_stall(origin, ca_and_tls, admin_headers):
    ca = ca_and_tls["ca"]
    edge.answered_while_stalled_bodies(
        origin, ca, PLATFORM_WEBHOOKS, {}, lambda: edge.get(origin, ca, CONNECTION, admin_headers)
    )


def test_a_body_that_stops_is_answered_408_and_closed(origin, ca_and_tls):
    edge.stalled_body_cut_off(origin, ca_and_tls["ca"], PLATFORM_WEBHOOKS, {}, within=10)


def test_the_servers_own_errors_are_problem_details(origin, ca_and_tls):
    ca = ca_and_tls["ca"]
    edge.assert_problem(edge.raw_get(origin, ca, CONNECTION, "X-Bad: a\x00b\r\n"), 400, "bad_request")
    key = edge.raw_get(origin, ca, CONNECTION, "x-api-key: dps_" + "k" * 9_000 + "\r\n")
    assert edge.assert_problem(key, 401, "invalid_api_key")["detail"] == "Invalid API key."


def test_a_chunked_body_over_10_mb_is_413_and_closed_on_every_route(origin, ca_and_tls, admin_headers):
    """The platform's public webhook reads its body; a push takes none (refused before it looks the quote up)."""
    pushes = f"/external/v1/pricing-quotes/{uuid.uuid4()}/billing-pushes"
    edge.chunked_body_over_limit_closes(origin, ca_and_tls["ca"], PLATFORM_WEBHOOKS, {})
    edge.chunked_body_over_limit_closes(origin, ca_and_tls["ca"], pushes, admin_headers)


@pytest.mark.parametrize("body", list(edge.MALFORMED_CHUNKED_BODIES.values()), ids=list(edge.MALFORMED_CHUNKED_BODIES))
def test_a_malformed_chunked_body_is_400_and_closed(origin, ca_and_tls, body):
    edge.malformed_chunked_body_is_400_and_closes(origin, ca_and_tls["ca"], PLATFORM_WEBHOOKS, {}, body)


def test_metrics_add_up_every_worker(origin, ca_and_tls):
    edge.metrics_add_up_every_worker(origin, ca_and_tls["ca"])
