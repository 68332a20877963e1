"""Builds a Falcon app with the shared middleware, error handling and route registry."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import falcon

from dps_common.auth.authenticator import KeyAuthenticator
from dps_common.auth.introspection import IntrospectingAuthenticator
from dps_common.auth.scopes import ROLE_SCOPES
from dps_common.db_guard import guard_responders
from dps_common.events.catalogue import EventCatalogue
from dps_common.http import problems
from dps_common.http.auth import AuthMiddleware
from dps_common.http.bodies import BodyLimit
from dps_common.http.health import Liveness, Metrics, Readiness
from dps_common.http.idempotency import IdempotencyMiddleware
from dps_common.http.json import JsonHandler
from dps_common.http.middleware import Observability, RequestContext
from dps_common.http.rate_limit import install_rate_limits
from dps_common.idempotency.store import IdempotencyStore
from dps_common.openapi.audience import for_api_keys
from dps_common.openapi.document import build_document, document_key_check_unavailable
from dps_common.openapi.events import add_event_catalogue
from dps_common.openapi.parts import Assembled, DocumentAssembler, fetch_json
from dps_common.ratelimit.settings import RateLimitSettings

API_PREFIX = "/external/v1"
INTERNAL_PREFIX = "/internal/v1"  # service-to-service only: the ingress never routes it

# what API keys may hold: an operation needing anything else is the console's (api-keys:manage)
_GRANTED_TO_ROLES = frozenset(str(scope) for scopes in ROLE_SCOPES.values() for scope in scopes)


class ServiceApp(falcon.App[falcon.Request, falcon.Response]):
    """A Falcon app that also carries its composition root's context (for tests and tools).

    Its responders meet a lost database connection as ``dps_common.db_retry`` says: run once more
    when nothing was done (those of ``retried_methods``, all by default; an app whose responders call
    other services before they write names only its reads), else answered 503 with Retry-After. A
    resource whose responders never reach the database says so (``uses_database = False``) and is
    served unwrapped."""

    context: object = None
    documented_routes: list[tuple[str, object]] = []  # (path under /external/v1, resource), set by Api
    retried_methods: frozenset[str] | None = None  # None: every method

    def add_route(self, uri_template: str, resource: object, **kwargs: Any) -> None:
        if getattr(resource, "uses_database", True):  # one that never does (whoami) skips the guard's cost
            guard_responders(resource, self.retried_methods)
        super().add_route(uri_template, resource, **kwargs)


class Api:
    """The app plus the list of keyed routes, so the OpenAPI document lists exactly what is served."""

    def __init__(
        self, service: str, authenticator: KeyAuthenticator, ready_checks: dict[str, Callable[[], None]], *,
        rate_limits: RateLimitSettings | None = None, idempotency: IdempotencyStore | None = None,
    ):
        self._authenticator = authenticator
        self.app = ServiceApp(
            middleware=[RequestContext(), AuthMiddleware(authenticator), Observability(service)],
            media_type=falcon.MEDIA_JSON,
        )
        # after auth, in this order: a request over its budget is refused before its chunked body is
        # read, and one whose body is over 10 MB before it claims a key
        if rate_limits is not None:
            install_rate_limits(self.app, rate_limits, service, authenticator)
        self.app.add_middleware(BodyLimit())  # a chunked body over 10 MB: 413 before anything is done
        if idempotency is not None:
            self.app.add_middleware(IdempotencyMiddleware(idempotency))
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

    def publish_openapi(
        self, title: str, version: str, *, events: EventCatalogue | None = None,
        parts: Sequence[str] = (), verify: bool | str = True, server_url: str = API_PREFIX,
        amend: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """The service's own document (its operations, and the ``events`` it publishes as webhooks)
        at ``/internal/v1/openapi.json``; at ``/external/v1/openapi.json`` the same without the operations
        no API key may call (the console's, ``dps_common.openapi.audience``), or, given the ``parts``
        (other services' internal document URLs), that merged with them. ``server_url``: its
        ``servers`` entry (the public base, e.g. ``http://127.0.0.1:8080/external/v1``; default relative).
        ``amend``: a last change of the service's own (the connector describes its browser pages).

        Built when first asked for, then kept: rendering every operation's schemas takes some 50 ms,
        which an app that never serves its document (each test's) should not pay."""

        def build() -> dict[str, Any]:
            document = build_document(title, version, server_url, self.routes)
            if events is not None:
                add_event_catalogue(document, events)
            for path, resource in self.routes:
                if getattr(resource, "public", False):  # a browser's redirect, a platform's signed call
                    for operation in document["paths"][path].values():
                        operation["security"] = []
                        operation["responses"].pop("401", None)
            if isinstance(self._authenticator, IntrospectingAuthenticator):
                document_key_check_unavailable(document)
            if amend is not None:
                amend(document)
            return document

        own = functools.cache(build)
        # the public one leaves out what no API key may call (dps_common.openapi.audience)
        public = functools.cache(lambda: for_api_keys(own(), _GRANTED_TO_ROLES))
        self.app.add_route(INTERNAL_PREFIX + "/openapi.json", _OpenApi(lambda: Assembled(own(), complete=True)))
        external = DocumentAssembler(public, parts, fetch_json(verify)).current if parts else (
            lambda: Assembled(public(), complete=True))
        self.app.add_route(API_PREFIX + "/openapi.json", _OpenApi(external))


class _OpenApi:
    public = True

    def __init__(self, current: Callable[[], Assembled]):
        self._current = current

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        assembled = self._current()
        resp.media = assembled.document
        if not assembled.complete:  # a part's service is unreachable: its operations are missing
            resp.set_header("X-Document-Incomplete", "true")
