"""RFC 9457 problem details for every error, with a stable ``code`` and the ``requestId``."""

from __future__ import annotations

import logging
from typing import Any

import falcon

from dps_common.db_retry import is_connection_lost, unavailable
from dps_common.errors import ServiceError, http_status_of
from dps_common.http.bodies import MALFORMED_BODY
from dps_common.json import dumps

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("dps.http")
Params = dict[str, Any]  # the route's URI template fields


def problem(req: falcon.Request, status: int, title: str, detail: str, code: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": f"https://errors.dealpricing.example/{code}",
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        "requestId": req.context.get("request_id"),
    }
    body.update(extra)
    return body


def _write(resp: falcon.Response, status: int, body: dict[str, Any]) -> None:
    resp.status = status
    resp.content_type = PROBLEM_JSON
    resp.data = dumps(body)
    resp.media = None


def handle_service_error(req: falcon.Request, resp: falcon.Response, ex: ServiceError, params: Params) -> None:
    status = http_status_of(ex)
    _write(resp, status, problem(req, status, ex.title, ex.detail, ex.code, **ex.extra))
    if ex.retry_after is not None:
        resp.set_header("Retry-After", str(ex.retry_after))
    if status in (408, 413) or ex.code == MALFORMED_BODY:
        # the rest of the body stays unread (or never came, or where it ends is unknown): close rather
        # than let the server drain it
        resp.set_header("Connection", "close")


def handle_http_error(req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError, params: Params) -> None:
    """Falcon's own errors (404 route, 405 method, ...) as problem details too."""
    status = ex.status_code
    code = {404: "not_found", 405: "method_not_allowed", 415: "unsupported_media_type"}.get(
        status, f"http_{status}"
    )
    title = ex.title or "Error"
    detail = ex.description or title
    _write(resp, status, problem(req, status, title, detail, code))
    resp.set_headers(ex.headers or {})


def handle_unexpected(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Params) -> None:
    if isinstance(ex, falcon.HTTPError):
        handle_http_error(req, resp, ex, params)
        return
    if is_connection_lost(ex):  # the database is away (in a middleware, say): 503, never 500
        handle_service_error(req, resp, unavailable(ex), params)
        return
    log.exception("unhandled error", extra={"requestId": req.context.get("request_id")})
    _write(resp, 500, problem(req, 500, "Internal error", "The server failed to process the request.", "internal_error"))


def install(app: falcon.App[falcon.Request, falcon.Response]) -> None:
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_http_error)
    app.add_error_handler(ServiceError, handle_service_error)
