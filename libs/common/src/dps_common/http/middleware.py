"""Cross-cutting request handling: request ids, early 413, access logs and Prometheus metrics."""

from __future__ import annotations

import logging
import time

import falcon
from prometheus_client import Counter, Gauge, Histogram

from dps_common import request_id
from dps_common.http.bodies import MAX_BODY_BYTES, too_large

REQUEST_ID_HEADER = request_id.HEADER
log = logging.getLogger("dps.access")

REQUESTS = Counter("dps_http_requests_total", "HTTP requests served", ["service", "method", "route", "status"])
LATENCY = Histogram(
    "dps_http_request_duration_seconds",
    "HTTP request latency",
    ["service", "method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
)

IN_FLIGHT = Gauge(
    "dps_http_requests_in_flight", "HTTP requests being handled (the server's, summed over its workers)",
    multiprocess_mode="livesum",
)


class RequestContext:
    """Assigns the request id (a caller's well-formed one is kept) and binds it for the request
    (``dps_common.request_id``: its log lines, internal calls and events carry it), and rejects
    oversized bodies by their Content-Length before any handler reads a byte."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.started = time.perf_counter()
        IN_FLIGHT.inc()
        given = req.get_header(REQUEST_ID_HEADER)
        req.context.request_id = given if request_id.valid(given) else request_id.new()
        request_id.bind(req.context.request_id)
        resp.set_header(REQUEST_ID_HEADER, req.context.request_id)
        length = req.content_length
        if length is not None and length > MAX_BODY_BYTES:
            raise too_large()

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        request_id.bind(None)  # the next request on this greenlet or thread starts with none
        if req.context.get("started") is not None:
            IN_FLIGHT.dec()


class Observability:
    """One metrics sample and one JSON access-log line per request (identifiers as fields)."""

    def __init__(self, service: str):
        self.service = service
        # labelled children by (method, route, status): ``labels()`` validates and locks on every
        # call; the set of routes, methods and statuses is small and fixed, so look them up once
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def _metrics(self, method: str, route: str, status: int) -> tuple[Counter, Histogram]:
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            children = (REQUESTS.labels(self.service, method, route, status), LATENCY.labels(self.service, method, route))
            self._children[key] = children
        return children

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        started = req.context.get("started")
        if started is None:
            return
        elapsed = time.perf_counter() - started
        route = req.uri_template or "unmatched"
        status = resp.status_code
        requests, latency = self._metrics(req.method, route, status)
        requests.inc()
        latency.observe(elapsed)
        if log.isEnabledFor(logging.INFO):
            principal = req.context.get("principal")
            log.info(
                "request",
                extra={
                    "requestId": req.context.request_id,
                    "method": req.method,
                    "route": route,
                    "status": status,
                    "durationMs": round(elapsed * 1000, 2),
                    "organizationId": str(principal.organization_id) if principal else None,
                },
            )
