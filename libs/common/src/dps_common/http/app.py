"""Builds a Falcon app with the shared middleware, error handling and route registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from dps_common.auth.authenticator import KeyAuthenticator
from dps_common.http import problems
from dps_common.http.auth import AuthMiddleware
from dps_common.http.health import Liveness, Metrics, Readiness
from dps_common.http.json import JsonHandler
from dps_common.http.middleware import Observability, RequestContext
from dps_common.http.openapi import build_document

API_PREFIX = "/external/v1"
INTERNAL_PREFIX = "/internal/v1"  # service-to-service only: the ingress never routes it


class ServiceApp(falcon.App[falcon.Request, falcon.Response]):
    """A Falcon app that also carries its composition root's context (for tests and tools)."""

    context: object = None
    documented_routes: list[tuple[str, object]] = []  # (path under /external/v1, resource), set by Api


class Api:
    """The app plus the list of keyed routes, so the OpenAPI document lists exactly what is served."""

    def __init__(self, service: str, authenticator: KeyAuthenticator, ready_checks: dict[str, Callable[[], None]]):
        self.app = ServiceApp(
            middleware=[RequestContext(), AuthMiddleware(authenticator), Observability(service)],
            media_type=falcon.MEDIA_JSON,
        )
        handler = JsonHandler()
        self.app.resp_options.media_handlers[falcon.MEDIA_JSON] = handler
        self.app.req_options.media_handlers[falcon.MEDIA_JSON] = handler
        self.app.req_options.strip_url_path_trailing_slash = True
        problems.install(self.app)
        self.routes: list[tuple[str, object]] = []
        self.app.documented_routes = self.routes
        self.app.add_route("/healthz", Liveness())
        self.app.add_route("/readyz", Readiness(ready_checks))
        self.app.add_route("/metrics", Metrics())

    def add(self, path: str, resource: object) -> None:
        """Serve ``resource`` at ``/external/v1{path}`` and document its operations."""
        self.app.add_route(API_PREFIX + path, resource)
        self.routes.append((path, resource))

    def add_internal(self, path: str, resource: object) -> None:
        """Serve ``resource`` at ``/internal/v1{path}``, outside the public document."""
        self.app.add_route(INTERNAL_PREFIX + path, resource)

    def publish_openapi(self, title: str, version: str) -> None:
        document = build_document(title, version, API_PREFIX, self.routes)
        self.app.add_route(API_PREFIX + "/openapi.json", _OpenApi(document))


class _OpenApi:
    public = True

    def __init__(self, document: dict[str, Any]):
        self._document = document

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._document
