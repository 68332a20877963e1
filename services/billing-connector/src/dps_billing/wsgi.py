"""gunicorn entry point: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_billing.wsgi:create()'``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dps_common.bootstrap import start_process

from dps_billing import SERVICE
from dps_billing.composition import build_http
from dps_billing.settings import Settings

if TYPE_CHECKING:
    import falcon


def create() -> falcon.App[falcon.Request, falcon.Response]:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return build_http(settings, key_events=True)  # this worker's own subscription, after the fork
