"""gunicorn entry point: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_webhooks.wsgi:create()'``."""

from dps_common.bootstrap import start_process
from dps_common.http.app import ServiceApp

from dps_webhooks import SERVICE
from dps_webhooks.composition import build_http
from dps_webhooks.settings import Settings


def create() -> ServiceApp:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return build_http(settings, key_events=True)  # this worker's own subscription, after the fork
