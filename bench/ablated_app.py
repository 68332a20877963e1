"""The api with one of its middleware switched off, for bench/run.py's table of what each costs a request.

Served like the api: ``gunicorn 'ablated_app:create("Observability")'`` (the middleware's class name,
``dps_api.wsgi:create()``'s app otherwise unchanged). Two are replaced by the least that keeps
``GET /whoami`` answering 200 the same way, so the difference is the middleware's own work:

- ``AuthMiddleware``: the principal of ``BENCH_API_KEY`` (checked once at start) is given to every
  request that reaches a resource (no key parse, cache lookup, HMAC or scope check);
- ``RequestContext``: only the start time is set, which ``Observability`` needs for its sample (no
  request id, no in-flight gauge, no Content-Length check).

Reaches into falcon's private middleware list (``_unprepared_middleware``): a bench tool only.
"""

from __future__ import annotations

import os
import time
from typing import Any

import falcon

from dps_api.wsgi import create as create_api

ABLATABLE = ("RequestContext", "AuthMiddleware", "Observability", "RateLimits", "BodyLimit", "IdempotencyMiddleware")


class _GivenPrincipal:
    def __init__(self, principal: object):
        self._principal = principal

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]) -> None:
        if resource is not None and not getattr(resource, "public", False):
            req.context.principal = self._principal


class _StartTimeOnly:
    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.started = time.perf_counter()


def create(off: str) -> falcon.App:
    if off not in ABLATABLE:
        raise SystemExit(f"ablated_app: no middleware named {off!r}; one of {', '.join(ABLATABLE)}")
    app = create_api()
    kept: list[object] = []
    for middleware in app._unprepared_middleware:
        name = type(middleware).__name__
        if name != off:
            kept.append(middleware)
        elif name == "AuthMiddleware":
            kept.append(_GivenPrincipal(app.context.authenticator.authenticate(os.environ["BENCH_API_KEY"])))
        elif name == "RequestContext":
            kept.append(_StartTimeOnly())
    if len(kept) == len(app._unprepared_middleware) and off not in ("AuthMiddleware", "RequestContext"):
        raise SystemExit(f"ablated_app: the api has no {off} middleware (rate limits off?)")
    app._unprepared_middleware = kept
    app._middleware = app._prepare_middleware(kept, independent_middleware=app._independent_middleware)
    return app
