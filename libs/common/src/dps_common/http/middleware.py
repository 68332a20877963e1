"""Cross-cutting request handling: request ids, early 413, access logs and Prometheus metrics."""

from __future__ import annotations

import logging
import time
from bisect import bisect_left
from collections.abc import Callable
from typing import NamedTuple

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
_REQUEST_ID_ENV = "HTTP_" + REQUEST_ID_HEADER.upper().replace("-", "_")  # what req.get_header reads


def _add(metric: Counter | Gauge) -> Callable[[float], None]:
    """The increment of an unlabelled metric or a labelled child, past prometheus-client's wrapper
    (its ``inc`` checks the labels and the sign on every call: more than the increment itself, with
    ``dps_common.edge.metrics.worker_value_class``). The same value object, so the same series."""
    return metric._value.inc  # type: ignore[no-any-return]


class _Series(NamedTuple):
    """One (method, route, status)'s request counter and latency histogram, as increments: what
    ``Counter.inc`` and ``Histogram.observe`` do (the first bucket whose bound holds the value; the
    bucket counts are cumulated when collected), without their checks, per request."""

    requests: Callable[[float], None]
    latency_sum: Callable[[float], None]
    buckets: tuple[Callable[[float], None], ...]
    bounds: tuple[float, ...]  # upper bounds, +Inf last

    @classmethod
    def of(cls, requests: Counter, latency: Histogram) -> _Series:
        return cls(_add(requests), latency._sum.inc, tuple(bucket.inc for bucket in latency._buckets),
                   tuple(latency._upper_bounds))

    def observe(self, seconds: float) -> None:
        self.requests(1)
        self.latency_sum(seconds)
        self.buckets[bisect_left(self.bounds, seconds)](1)


class RequestContext:
    """Assigns the request id (a caller's well-formed one is kept) and binds it for the request
    (``dps_common.request_id``: its log lines, internal calls and events carry it), and rejects
    oversized bodies by their Content-Length before any handler reads a byte."""

    def __init__(self) -> None:
        self._in_flight = _add(IN_FLIGHT)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        context = req.context
        context.started = time.perf_counter()
        self._in_flight(1)
        given = req.env.get(_REQUEST_ID_ENV)
        context.request_id = rid = given if given is not None and request_id.valid(given) else request_id.new()
        request_id.bind(rid)
        resp.set_header(REQUEST_ID_HEADER, rid)
        if "CONTENT_LENGTH" in req.env:  # (req.content_length raises and catches a KeyError without one)
            length = req.content_length
            if length is not None and length > MAX_BODY_BYTES:
                raise too_large()

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        request_id.bind(None)  # the next request on this greenlet or thread starts with none
        if req.context.get("started") is not None:
            self._in_flight(-1)


class Observability:
    """One metrics sample and one JSON access-log line per request (identifiers as fields)."""

    def __init__(self, service: str):
        self.service = service
        # labelled children by (method, route, status): ``labels()`` validates and locks on every
        # call; the set of routes, methods and statuses is small and fixed, so look them up once
        self._children: dict[tuple[str, str, int], _Series] = {}

    def _metrics(self, method: str, route: str, status: int) -> _Series:
        key = (method, route, status)
        series = self._children.get(key)
        if series is None:
            series = _Series.of(REQUESTS.labels(self.service, method, route, status),
                                LATENCY.labels(self.service, method, route))
            self._children[key] = series
        return series

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        started = req.context.get("started")
        if started is None:
            return
        elapsed = time.perf_counter() - started
        route = req.uri_template or "unmatched"
        status = resp.status_code
        self._metrics(req.method, route, status).observe(elapsed)
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
