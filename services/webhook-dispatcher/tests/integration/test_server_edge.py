"""The dispatcher's HTTP side as deployed: gunicorn with the production settings (two workers, TLS)
puts it behind the server edge, whose whole suite runs once on a minimal app
(libs/common/tests/integration/test_edge_server.py); here, one smoke test that the dispatcher's
server is that edge."""

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
    env = {**os.environ, **settings_env, "LOG_LEVEL": "WARNING", **edge.SMOKE_TIMEOUTS_ENV}
    log = tmp_path_factory.mktemp("wh-edge") / "webhooks.log"
    with gunicorn("dps_webhooks.wsgi:create()", env, tls_files, log, workers=2) as url:
        yield url


def test_the_dispatcher_is_served_behind_the_edge(origin, tls_files, org):
    """A head that stops is the edge's 408; a chunked body over 10 MB is 413 and closed, on a route
    that takes no body too (refused before it looks the id up)."""
    ca = tls_files["ca"]
    edge.slow_head_cut_off(origin, ca, within=5)
    edge.chunked_body_over_limit_closes(origin, ca, f"{CONFIGS}/{uuid.uuid4()}/rotate-secret", org.admin.headers)
