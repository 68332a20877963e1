"""The Kubernetes ingress and the compose proxy send every public route to the service that registers
it, and every page of the settings console to the console, and route the same paths alike; nothing
else (internal, health, metrics) is routed by either."""

from __future__ import annotations

import pytest
import yaml
from deploy_helpers import K8S, OWNERS, PROXY_CONF, console_routes, ingress_router, proxy_router, service_routes

INGRESS = yaml.safe_load((K8S / "base" / "ingress.yaml").read_text())
ROUTES = service_routes()
CASES = [(owner, path) for owner, paths in ROUTES.items() for path in paths]
CONSOLE_PAGES = console_routes()


def test_every_service_registers_routes():
    assert set(ROUTES) == set(OWNERS)
    assert "/external/v1/billing-platform/webhooks" in ROUTES["billing"]
    assert any(path.endswith("/billing-connection/callback") for path in ROUTES["billing"])
    assert any("/billing-pushes" in path for path in ROUTES["billing"])


@pytest.mark.parametrize(("owner", "path"), CASES, ids=[f"{o}:{p}" for o, p in CASES])
def test_both_routers_send_a_route_to_its_owner(owner, path):
    _, service, compose_service = OWNERS[owner]
    assert ingress_router(INGRESS)(path) == service
    assert proxy_router(PROXY_CONF.read_text())(path) == compose_service


def test_the_console_registers_its_pages_under_console():
    assert {"/console", "/console/sign-in", "/console/sign-in/link", "/console/api-keys"} <= set(CONSOLE_PAGES)
    assert all(path == "/console" or path.startswith("/console/") for path in CONSOLE_PAGES)


@pytest.mark.parametrize("path", CONSOLE_PAGES)
def test_both_routers_send_every_console_page_to_the_console(path):
    assert ingress_router(INGRESS)(path) == "dps-console"
    assert proxy_router(PROXY_CONF.read_text())(path) == "console"


@pytest.mark.parametrize("path", [
    "/internal/v1/key-introspection", "/healthz", "/readyz", "/metrics", "/external/v2/whoami",
    "/externalv1/whoami", "/internal/v1/console/credentials", "/consolex", "/mailbox",
])
def test_neither_router_routes_outside_the_public_api(path):
    assert ingress_router(INGRESS)(path) is None
    assert proxy_router(PROXY_CONF.read_text())(path) is None


@pytest.mark.parametrize("path", [
    # near misses of the connector's routes stay with the api (which answers 404 for them)
    "/external/v1/pricing-quotes/abc/billing-pushesx", "/external/v1/billing-platform/webhooks/extra",
    "/external/v1/billing-connectionx", "/external/v1/pricing-quotes", "/external/v1/openapi.json",
    "/external/v1/billing-pushesx", "/external/v1/webhook-event-typesx", "/external/v1/console",
])
def test_near_misses_stay_with_the_api(path):
    assert ingress_router(INGRESS)(path) == "dps-api"
    assert proxy_router(PROXY_CONF.read_text())(path) == "api"


def test_the_ingress_is_tls_only():
    annotations = INGRESS["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/force-ssl-redirect"] == "true"
    hosts = {rule["host"] for rule in INGRESS["spec"]["rules"]}
    assert hosts <= {host for tls in INGRESS["spec"]["tls"] for host in tls["hosts"]}
