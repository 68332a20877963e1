"""make run's proxy (``dps_dev.proxy``): the routes are the ingress's own, in ingress-nginx's order;
the config Caddy is given is valid to Caddy itself; and, run in front of four upstreams that echo
what reached them, it sends each path where the ingress sends it, keeps the client's Host and names
the client in X-Forwarded-For whatever the client claims there."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from caddy_proxy import echo_upstreams, running_caddy

from dps_dev.proxy import BACKENDS, IngressError, ingress_routes, route_of

ID = "0193e6b2-7c1a-7def-8000-000000000001"
# path -> the Service the ingress sends it to (None: not routed)
EXPECTED = {
    "/external/v1/webhook-configs": "dps-webhook-dispatcher",
    f"/external/v1/webhook-configs/{ID}/deliveries": "dps-webhook-dispatcher",
    "/external/v1/webhook-event-types": "dps-webhook-dispatcher",
    "/external/v1/billing-connection": "dps-billing-connector",
    "/external/v1/billing-connection/callback": "dps-billing-connector",
    "/external/v1/billing-platform/webhooks": "dps-billing-connector",
    f"/external/v1/pricing-quotes/{ID}/billing-pushes": "dps-billing-connector",
    "/external/v1/billing-pushes": "dps-billing-connector",
    "/External/V1/Billing-Pushes": "dps-billing-connector",  # ingress-nginx's regex locations ignore case
    "/external/v1/pricing-quotes": "dps-api",
    f"/external/v1/pricing-quotes/{ID}": "dps-api",
    "/external/v1/openapi.json": "dps-api",
    "/external/v1": "dps-api",
    "/external/v1/billing-pushesx": "dps-api",
    "/external/v1/webhook-event-typesx": "dps-api",
    "/external/v1/billing-platform/webhooks/extra": "dps-api",
    "/console": "dps-console",
    "/console/api-keys": "dps-console",
    "/consolex": None,
    "/internal/v1/key-introspection": None,
    "/healthz": None,
    "/metrics": None,
    "/external/v2/whoami": None,
}


def test_the_routes_are_the_ingress_paths_longest_first():
    routes = ingress_routes()
    assert [len(route.pattern) for route in routes] == sorted((len(route.pattern) for route in routes), reverse=True)
    assert {route.backend for route in routes} == set(BACKENDS)
    assert {path: route_of(routes, path) for path in EXPECTED} == EXPECTED


def test_an_ingress_that_routes_to_a_service_make_run_does_not_start_is_refused(tmp_path):
    ingress = tmp_path / "ingress.yaml"
    ingress.write_text("spec:\n  rules:\n    - http:\n        paths:\n          - path: /x\n"
                       "            backend: {service: {name: dps-reports, port: {name: http}}}\n")
    with pytest.raises(IngressError, match="dps-reports, which make run does not start"):
        ingress_routes(ingress)
    ingress.write_text("spec: {}\n")
    with pytest.raises(IngressError, match="cannot read the ingress's routes"):
        ingress_routes(ingress)


@pytest.fixture
def proxy(tmp_path) -> Iterator[str]:
    with echo_upstreams() as upstreams, running_caddy(tmp_path, upstreams) as (address, _):
        yield address


def _get(proxy: str, path: str, source: str = "127.0.0.1", **headers: str) -> tuple[int, dict]:
    connection = http.client.HTTPConnection(proxy, timeout=10, source_address=(source, 0))
    connection.request("GET", path, headers=headers)
    answer = connection.getresponse()
    return answer.status, json.loads(answer.read())


def test_caddy_routes_each_path_where_the_ingress_does(proxy):
    for path, backend in EXPECTED.items():
        status, body = _get(proxy, path)
        if backend is None:
            assert (status, body["status"]) == (404, 404) and "make run's proxy" in body["detail"], path
        else:
            assert (status, body["backend"], body["path"]) == (200, backend, path)  # the path unchanged


def test_the_client_is_named_by_its_address_never_by_what_it_claims(proxy):
    status, body = _get(proxy, "/external/v1/whoami", source="127.0.0.2", **{
        "X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "https", "Host": "dps.localhost:1234"})
    headers = body["headers"]
    assert status == 200
    assert headers["x-forwarded-for"] == "127.0.0.2"
    assert headers["x-forwarded-proto"] == "http"
    assert headers["host"] == "dps.localhost:1234"  # the client's Host, passed on
