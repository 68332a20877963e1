"""gunicorn entry point: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_billing.wsgi:create()'``."""

import falcon

from dps_common.bootstrap import start_process

from dps_billing import SERVICE
from dps_billing.app import create_app
from dps_billing.settings import Settings


def create() -> falcon.App[falcon.Request, falcon.Response]:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return create_app(settings, key_events=True)  # this worker's own subscription, after the fork
