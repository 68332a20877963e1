"""The connector's HTTP side as deployed: gunicorn with the production settings (two workers, TLS)
puts it behind the server edge, whose whole suite runs once on a minimal app
(libs/common/tests/integration/test_edge_server.py); here, one smoke test that the connector's
server is that edge, on its public route (the platform's webhook, whose body is read to check its
signature) and a keyed one that takes no body."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from dps_testing import edge_checks as edge
from dps_testing.processes import gunicorn, write_tls_files

PLATFORM_WEBHOOKS = "/external/v1/billing-platform/webhooks"  # public: the body is read to check its signature


@pytest.fixture(scope="module")
def ca_and_tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return write_tls_files(tmp_path_factory.mktemp("billing-edge-tls"))


@pytest.fixture(scope="module")
def origin(settings_env: dict[str, str], ca_and_tls: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {**os.environ, **settings_env, **edge.SMOKE_TIMEOUTS_ENV}
    log = tmp_path_factory.mktemp("billing-edge") / "connector.log"
    with gunicorn("dps_billing.wsgi:create()", env, ca_and_tls, log, workers=2) as url:
        yield url


def test_the_connector_is_served_behind_the_edge(origin, ca_and_tls, fake_api):
    """A body that stops is the edge's 408; a chunked body over 10 MB is 413 and closed, on the public
    webhook and on a push (which takes no body: refused before it looks the quote up)."""
    ca = ca_and_tls["ca"]
    admin_headers = {"x-api-key": fake_api.organization().admin.key}
    edge.stalled_body_cut_off(origin, ca, PLATFORM_WEBHOOKS, {}, within=5)
    edge.chunked_body_over_limit_closes(origin, ca, PLATFORM_WEBHOOKS, {})
    edge.chunked_body_over_limit_closes(origin, ca, f"/external/v1/pricing-quotes/{uuid.uuid4()}/billing-pushes", admin_headers)
