"""The console's Falcon app: ``create_app(ctx)`` wires the middleware, the error pages, health and
metrics, the static files and the pages on the context the composition root built
(``dps_console.composition.build_http``, its only caller)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import falcon

from dps_common import runtime_metrics
from dps_common.db import ping
from dps_common.db_guard import guard_middleware
from dps_common.errors import DatabaseUnavailable
from dps_common.http.app import ServiceApp
from dps_common.http.health import Liveness, Metrics, Readiness
from dps_common.http.middleware import Observability, RequestContext

from dps_console import SERVICE
from dps_console.resources.context import AppContext
from dps_console.resources.routes import add_routes
from dps_console.resources.views import ViewTokens
from dps_console.resources.web import (
    FAVICON_PATH,
    ROOT,
    ConsoleMiddleware,
    Cookies,
    Favicon,
    Renderer,
    install_error_pages,
)

STATIC = Path(__file__).parent.parent / "static"  # package data, beside templates/


def create_app(ctx: AppContext) -> falcon.App[falcon.Request, falcon.Response]:
    cookies = Cookies(ctx.settings)
    renderer = Renderer(ctx.keys.csrf, ctx.keys.inline_forms, ctx.now)
    console_middleware = ConsoleMiddleware(ctx.settings, ctx.sessions, cookies, ctx.keys.csrf, renderer)
    view_tokens = ViewTokens(ctx.sessions)
    for hooks in (console_middleware, view_tokens):  # their session reads: a lost connection is the 503 page too
        guard_middleware(hooks)
    middleware: list[Any] = [RequestContext(), console_middleware, view_tokens, Observability("console")]
    app = ServiceApp(middleware=middleware)
    # a page whose connection was lost before it did anything is shown once more, but a form is not
    # sent twice: its handler calls the other services before it writes here (dps_common.db_retry)
    app.retried_methods = frozenset({"GET", "HEAD"})
    runtime_metrics.install(SERVICE, "dps-console")
    app.req_options.strip_url_path_trailing_slash = True
    install_error_pages(app, renderer, ctx.sessions, cookies)
    app.add_error_handler(DatabaseUnavailable, _database_unavailable_page(renderer))
    liveness = Liveness()
    app.add_route("/healthz", liveness)
    app.add_route(ROOT + "/healthz", liveness)
    app.add_route("/readyz", Readiness({"database": lambda: ping(ctx.tx)}))
    app.add_route("/metrics", Metrics())
    app.add_static_route(ROOT + "/static", str(STATIC))
    app.add_route(FAVICON_PATH, Favicon())
    add_routes(app, ctx, renderer, cookies)
    app.context = ctx
    return app


def _database_unavailable_page(renderer: Renderer) -> Callable[..., None]:
    """The console's database cannot be reached: a 503 page with Retry-After, never the 500 one."""

    def page(req: falcon.Request, resp: falcon.Response, ex: DatabaseUnavailable, params: dict[str, Any]) -> None:
        renderer.render(req, resp, "error.html", status=503, title="Try again in a moment",
                        message="The console cannot reach its database at the moment. Try again in a moment.")
        resp.set_header("Retry-After", str(ex.retry_after))

    return page
