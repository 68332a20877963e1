"""The dispatcher's HTTP side as deployed: gunicorn with the production settings (two workers, TLS),
against real slow and malformed clients on real sockets (``dps_testing.edge_checks``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from dps_testing import edge_checks as edge
from dps_testing.processes import gunicorn

CONFIGS = "/external/v1/webhook-configs"


@pytest.fixture(scope="module")
def origin(settings_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {**os.environ, **settings_env, "LOG_LEVEL": "WARNING", **edge.TEST_TIMEOUTS_ENV}
    log = tmp_path_factory.mktemp("wh-edge") / "webhooks.log"
    with gunicorn("dps_webhooks.wsgi:create()", env, tls_files, log, workers=2) as url:
        yield url


def test_requests_are_answered_while_200_clients_send_their_headers_slowly(origin, tls_files, org):
    ca = tls_files["ca"]
    edge.answered_while_slow_headers(origin, ca, lambda: edge.get(origin, ca, CONFIGS, org.admin.headers))


def test_requests_are_answered_while_200_bodies_stall(origin, tls_files, org):
    ca = tls_files["ca"]
    edge.answered_while_stalled_bodies(
        origin, ca, CONFIGS, org.admin.headers, lambda: edge.get(origin, ca, CONFIGS, org.admin.headers)
    )


def test_a_body_that_stops_is_answered_408_and_closed(origin, tls_files, org):
    edge.stalled_body_cut_off(origin, tls_files["ca"], CONFIGS, org.admin.headers, within=10)


def test_the_servers_own_errors_are_problem_details(origin, tls_files):
    ca = tls_files["ca"]
    edge.assert_problem(edge.raw_get(origin, ca, CONFIGS + "?cursor=" + "c" * 10_000), 414, "uri_too_long")
    key = edge.raw_get(origin, ca, CONFIGS, "x-api-key: dps_" + "k" * 9_000 + "\r\n")
    assert edge.assert_problem(key, 401, "invalid_api_key")["detail"] == "Invalid API key."


def test_a_chunked_body_over_10_mb_is_413_and_closed_on_a_route_that_takes_no_body_too(origin, tls_files, org):
    rotate_secret = f"{CONFIGS}/{uuid.uuid4()}/rotate-secret"  # takes no body: refused before it looks the id up
    for path in (CONFIGS, rotate_secret):
        edge.chunked_body_over_limit_closes(origin, tls_files["ca"], path, org.admin.headers)


@pytest.mark.parametrize("body", list(edge.MALFORMED_CHUNKED_BODIES.values()), ids=list(edge.MALFORMED_CHUNKED_BODIES))
def test_a_malformed_chunked_body_is_400_and_closed(origin, tls_files, org, body):
    edge.malformed_chunked_body_is_400_and_closes(origin, tls_files["ca"], CONFIGS, org.admin.headers, body)


def test_metrics_add_up_every_worker(origin, tls_files):
    edge.metrics_add_up_every_worker(origin, tls_files["ca"])
