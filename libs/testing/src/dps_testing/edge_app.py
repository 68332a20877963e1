"""A minimal service for the server edge's own suite (libs/common/tests/integration/test_edge_server.py):
the app every service builds on (``dps_common.http.app.Api``: its middleware, the 10 MB body limit,
problem answers, ``/healthz``, ``/readyz``, ``/metrics``) with one key and two routes, served by the
production gunicorn settings like the services:
``gunicorn -c python:dps_common.gunicorn_conf 'dps_testing.edge_app:create()'``.

- ``/external/v1/things``: GET lists nothing, POST reads its body as the services do (``read_body``; 201);
- ``/external/v1/hooks``: POST, public (no key, as a platform's signed webhook), reads its body too;
- ``/external/v1/things/{id}/touch``: POST takes no body and records the call in ``EDGE_TOUCHES_FILE``
  (a file, as gunicorn's workers are processes), so a test can tell that a refused request did nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from uuid import UUID

import falcon

from dps_common.auth.authenticator import INVALID_KEY, MISSING_KEY
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.errors import Unauthorized
from dps_common.http.app import Api, ServiceApp
from dps_common.http.bodies import read_body
from dps_common.logs import configure

KEY = "dps_edgeprobe_0123456789abcdef0123456789abcdef"
HEADERS = {"x-api-key": KEY}
THINGS = "/external/v1/things"
HOOKS = "/external/v1/hooks"
TOUCHES_ENV = "EDGE_TOUCHES_FILE"
_PRINCIPAL = Principal(UUID(int=1), "Edge probe", UUID(int=2), Role.ADMIN, "edgeprobe")


class OneKey:
    """Accepts ``KEY`` alone."""

    def authenticate(self, raw_key: str | None) -> Principal:
        if not raw_key:
            raise Unauthorized(MISSING_KEY, code="missing_api_key")
        if raw_key != KEY:
            raise Unauthorized(INVALID_KEY, code="invalid_api_key")
        return _PRINCIPAL


class Things:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"things": []}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"received": len(read_body(req))}
        resp.status = falcon.HTTP_201


class Hooks(Things):
    public = True


class Touch:
    def __init__(self, touches: Path):
        self._touches = touches

    def on_post(self, req: falcon.Request, resp: falcon.Response, thing_id: str) -> None:
        with self._touches.open("a") as touches:
            touches.write(thing_id + "\n")
        resp.media = {"touched": thing_id}
        resp.status = falcon.HTTP_201


def touched(touches: Path, thing_id: str) -> int:
    """How many times ``thing_id`` was touched."""
    return touches.read_text().split().count(thing_id) if touches.exists() else 0


def create() -> ServiceApp:
    configure(os.environ.get("LOG_LEVEL", "WARNING"), service="edge-probe", process="http")
    api = Api("edge-probe", OneKey(), {})
    api.add("/things", Things())
    api.add("/hooks", Hooks())
    api.add("/things/{thing_id}/touch", Touch(Path(os.environ[TOUCHES_ENV])))
    return api.app
