"""One request followed across services by one id: a dispatcher request's ``X-Request-Id`` goes with its
key introspection call, so the api (a real one, gunicorn over HTTPS) logs that call under the same id."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from uuid import uuid4

import falcon.testing
import pytest

from dps_testing.provisioning import Org
from dps_testing.real_api import api_server

from dps_webhooks.composition import build_http
from dps_webhooks.settings import Settings

WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def logged_api(api_env: dict[str, str], tls_files: dict[str, str], tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """The api with a log file of this module's own, at INFO (its access lines)."""
    log = tmp_path_factory.mktemp("request-id-api") / "api.log"
    with api_server({**api_env, "LOG_LEVEL": "INFO"}, tls_files, log) as origin:
        yield origin, log


def api_lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def test_the_request_id_goes_with_the_key_introspection_call(
    logged_api: tuple[str, Path], make_settings: Callable[..., Settings], api_org: Org
) -> None:
    origin, log = logged_api
    client = falcon.testing.TestClient(build_http(make_settings(API_URL=origin)))
    member = api_org.member("admin", f"traced-{uuid4().hex[:8]}@acme.example")  # a key no cache holds yet
    traced = f"trace-{uuid4().hex}"
    resp = client.simulate_get("/external/v1/webhook-configs", headers={**member.headers, "X-Request-Id": traced})
    assert resp.status_code == 200, resp.text
    assert resp.headers["X-Request-Id"] == traced
    deadline = time.monotonic() + WAIT_SECONDS
    while not [line for line in api_lines(log) if line.get("requestId") == traced]:
        assert time.monotonic() < deadline, "the api logged no line under the caller's request id"
        time.sleep(0.1)
    [line] = [line for line in api_lines(log) if line.get("requestId") == traced]
    assert (line["route"], line["status"], line["service"], line["process"]) == (
        "/internal/v1/key-introspection", 200, "api", "http"
    )
