"""gunicorn entry point: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_console.wsgi:create()'``."""

import falcon

from dps_common.bootstrap import start_process

from dps_console import SERVICE
from dps_console.app import create_app
from dps_console.settings import Settings


def create() -> falcon.App[falcon.Request, falcon.Response]:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return create_app(settings)
