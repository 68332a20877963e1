"""gunicorn entry point: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_console.wsgi:create()'``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dps_common.bootstrap import start_process

from dps_console import SERVICE
from dps_console.composition import build_http
from dps_console.settings import Settings

if TYPE_CHECKING:
    import falcon


def create() -> falcon.App[falcon.Request, falcon.Response]:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return build_http(settings)
