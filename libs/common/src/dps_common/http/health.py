"""Liveness, readiness (checks the database) and Prometheus metrics, without an API key."""

from __future__ import annotations

from collections.abc import Callable

import falcon
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dps_common.edge import metrics


class Liveness:
    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"status": "ok"}


class Readiness:
    public = True

    def __init__(self, checks: dict[str, Callable[[], None]]):
        self._checks = checks

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        results, ready = {}, True
        for name, check in self._checks.items():
            try:
                check()
                results[name] = "ok"
            except Exception:  # readiness reports any failure of a dependency, whatever its kind
                results[name] = "unavailable"
                ready = False
        resp.status = 200 if ready else 503
        resp.media = {"status": "ok" if ready else "unavailable", "checks": results}


class Metrics:
    """The server's metrics: every gunicorn worker's, whichever answers (``dps_common.edge.metrics``)."""

    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = CONTENT_TYPE_LATEST
        resp.data = generate_latest(metrics.registry())
